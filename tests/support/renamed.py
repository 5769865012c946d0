"""A rename computed in process and applied to the sources, for the edit engine tests."""

from __future__ import annotations

from reference_host.edit.textedits import Edit, apply_text_edits
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.rename import RenameResult, plan_rename


def renamed(sources: dict[str, str], symbol: str, new: str) -> tuple[RenameResult, dict[str, str]]:
    """The rename's result and the sources as its edits leave them (unchanged when refused)."""
    index = InspectEngine().index_sources({p: s.encode() for p, s in sources.items()})
    result = plan_rename(index, dict(sources), symbol, new)
    out = dict(sources)
    if result.refusal is None:
        for path in set(result.sites) | set(result.strings):
            edits = [
                Edit((ln, c), (ln, c + len(result.old)), new)
                for ln, c in result.sites.get(path, ())
            ]
            edits += [Edit(t.start, t.end, f"'{new}'") for t in result.strings.get(path, [])]
            out[path] = apply_text_edits(sources[path].encode(), edits).decode()
    return result, out
