"""Remove the unused imports of Python files, from the inspect engine's per-file facts.

The fix for `python/unused-import` findings. A module-level (column 0) import statement's bound
name is unused when no use in the file starts with it, `__all__` does not list it, and the name
does not appear as a word anywhere else in the file (a string annotation, a docstring example, a
`getattr` — when in doubt the import stays). `__future__` and star imports always stay, and so
does every import of an `__init__.py` (those are re-exports). A statement whose names are all
unused loses its lines; one with some used names is rewritten to keep exactly those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reference_host.providers.pyindex.facts import ModuleFacts, Span
from reference_host.providers.pyindex.tokens import Alias, import_aliases, tokens_of


@dataclass(frozen=True)
class ImportFix:
    """Replace lines first..last (inclusive, whole lines) of a file with *text* ('' deletes)."""

    first: int
    last: int
    text: str
    removed: tuple[str, ...]


def _statement(facts: ModuleFacts, span: Span) -> tuple[str, int, str | None]:
    imports = [i for i in facts.imports if i.span == span]
    head = imports[0]
    return head.module, head.level, None if head.name is None else "from"


def _rewrite(module: str, level: int, kind: str | None, kept: list[Alias], parens: bool) -> str:
    names = []
    for alias in kept:
        plain = alias.bound == (alias.name.split(".")[0] if kind is None else alias.name)
        names.append(alias.name if plain else f"{alias.name} as {alias.bound}")
    if kind is None:
        return f"import {', '.join(names)}"
    source = "." * level + module
    single = f"from {source} import {', '.join(names)}"
    if not parens or len(single) <= 88:
        return single
    return "from {} import (\n{})".format(source, "".join(f"    {n},\n" for n in names))


def unused_import_fixes(path: str, facts: ModuleFacts, text: str) -> list[ImportFix]:
    """The line replacements removing *path*'s unused imports (empty when none, or in doubt)."""
    if path.endswith("__init__.py") or facts.error is not None:
        return []
    tokens = tokens_of(text)
    if tokens is None:
        return []
    lines = text.splitlines()
    used = {use.chain[0] for use in facts.uses}
    exported = set(facts.all_names or [])
    fixes: list[ImportFix] = []
    for span in sorted({i.span for i in facts.imports if i.scope == 0}):
        module, level, kind = _statement(facts, span)
        if module == "__future__" or span[1] != 0:
            continue
        tail = lines[span[2]][span[3] :].strip() if span[2] < len(lines) else ""
        if tail and not tail.startswith("#"):
            continue  # another statement shares the line (`import a; x = 1`)
        aliases, parens = import_aliases(tokens, span)
        if not aliases or any(a.name == "*" for a in aliases):
            continue
        outside = "\n".join(lines[: span[0]] + lines[span[2] + 1 :])
        unused = [
            a
            for a in aliases
            if a.bound not in used
            and a.bound not in exported
            and not re.search(rf"(?<![\w.]){re.escape(a.bound)}(?!\w)", outside)
        ]
        if not unused:
            continue
        kept = [a for a in aliases if a not in unused]
        replacement = _rewrite(module, level, kind, kept, parens) if kept else ""
        fixes.append(ImportFix(span[0], span[2], replacement, tuple(a.bound for a in unused)))
    return fixes


def apply_fixes(text: str, fixes: list[ImportFix]) -> str:
    """*text* with the fixes applied (to check the result still compiles)."""
    lines = text.splitlines(keepends=True)
    for fix in sorted(fixes, key=lambda f: f.first, reverse=True):
        ending = "\n" if fix.text else ""
        lines[fix.first : fix.last + 1] = [fix.text + ending] if fix.text else []
    return "".join(lines)
