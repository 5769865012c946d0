"""Edits computed in process and applied to the sources, for the edit engine tests: a rename
from the engine alone, and a plan from the provider with every file served."""

from __future__ import annotations

from typing import Any

import anyio

from asp_protocol.canonical import blob_id
from asp_protocol.grants import ReadGrant
from reference_host.edit.textedits import Edit, apply_text_edits
from reference_host.providers import PYTHON_EDIT
from reference_host.providers.callbacks import TreeEntry, TreeListing
from reference_host.providers.editing import ProposeRequest
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.loaded import Loaded
from reference_host.providers.pyindex.rename import RenameResult, plan_rename
from reference_host.providers.python_edit import PythonEditProvider
from tests.support.provider_host import as_bytes


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
            edits += [Edit(t.start, t.end, text) for t, text in result.strings.get(path, [])]
            out[path] = apply_text_edits(sources[path].encode(), edits).decode()
    return result, out


class Listing:
    """`workspace/listTree` over *sources*, with the host's glob matching (the edit provider
    lists the files that are not Python this way)."""

    def __init__(self, sources: dict[str, str | bytes]) -> None:
        self.tree = {p: blob_id(as_bytes(s)) for p, s in sources.items()}
        self.listings = 0

    async def list_tree(self, globs: list[str] | None = None) -> TreeListing:
        self.listings += 1
        grant = ReadGrant(globs or ["**"])
        entries = [TreeEntry(p, b, "file") for p, b in sorted(self.tree.items()) if grant.allows(p)]
        return TreeListing(entries, False)


class Serving(Listing):
    """Host callbacks that serve every blob of *sources* (the edit provider's reads)."""

    def __init__(self, sources: dict[str, str | bytes]) -> None:
        super().__init__(sources)
        self.by_blob = {blob_id(as_bytes(s)): as_bytes(s) for s in sources.values()}

    async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, Any]]:
        return {b: self.by_blob[b] for b in ids if b in self.by_blob}, {}


class CountingHost(Listing):
    """Serves blobs, counts what was asked, and hangs on batches after the first *open* ones."""

    def __init__(
        self, sources: dict[str, str], open_batches: int | None = None, refused: str = ""
    ) -> None:
        super().__init__(dict(sources))
        self.by_blob = {blob_id(s.encode()): s.encode() for s in sources.values()}
        self.asked: list[str] = []
        self.open_batches = open_batches
        self.refused = blob_id(sources[refused].encode()) if refused else None

    async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, Any]]:
        if self.open_batches is not None:
            if self.open_batches == 0:
                await anyio.sleep_forever()
            self.open_batches -= 1
        self.asked.extend(ids)
        return {b: self.by_blob[b] for b in ids if b != self.refused}, {}


def loaded(sources: dict[str, str | bytes], host: Any = None) -> Loaded:
    """The provider's loaded session for *sources*: the index and blobs of their `.py` files,
    their `.pyi` stubs, and a host serving them all (and listing the other files)."""
    python = {p: as_bytes(s) for p, s in sources.items() if p.endswith(".py")}
    index = InspectEngine().index_sources(python)
    blobs = {path: blob_id(as_bytes(text)) for path, text in sources.items()}
    stubs = {p: b for p, b in blobs.items() if p.endswith(".pyi")}
    served = host or Serving(sources)
    return Loaded(index, {p: blobs[p] for p in python}, {}, served, stubs=stubs)  # type: ignore[arg-type]


async def provider_plan(
    sources: dict[str, str | bytes], operation: str, host: Any = None, **args: Any
) -> dict[str, Any]:
    """The plan `asp-python-edit` proposes for *sources* (in process; *host* serves the blobs,
    by default every one)."""
    request = ProposeRequest(operation, {"rev": "git:tree:x"}, ["**"], "proposal:1", dict(args))
    provider = PythonEditProvider()
    block = {"id": PYTHON_EDIT.id}
    if operation == "rename":
        return await provider._rename(request, block, loaded(sources, host))
    return await provider._imports(request, block, loaded(sources, host))


def planned(sources: dict[str, str], plan: dict[str, Any]) -> dict[str, str]:
    """*sources* as a complete plan's text edits leave them."""
    tree = with_plan({p: s.encode() for p, s in sources.items()}, plan)
    return {p: b.decode() for p, b in tree.items()}


def with_plan(tree: dict[str, bytes], plan: dict[str, Any]) -> dict[str, bytes]:
    """The files of *tree* (path -> bytes) as a complete plan's text edits leave them."""
    out = dict(tree)
    for change in plan["workspaceEdit"]["documentChanges"]:
        edits = [
            Edit(
                (e["range"]["start"]["line"], e["range"]["start"]["char"]),
                (e["range"]["end"]["line"], e["range"]["end"]["char"]),
                e["newText"],
            )
            for e in change["edits"]
        ]
        out[change["path"]] = apply_text_edits(out[change["path"]], edits)
    return out
