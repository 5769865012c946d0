"""Remove the unused imports of Python files, from the inspect engine's per-file facts.

The fix for `python/unused-import` findings. A module-level (column 0) import statement's bound
name is unused when no use in the file starts with it, `__all__` does not list it, and the name
does not appear as a word anywhere else in the file (a string annotation, a docstring example, a
`getattr` — when in doubt the import stays). `__future__` and star imports always stay, and so
does every import of an `__init__.py` (those are re-exports), every statement a `# noqa` comment
(bare, or naming F401) marks as deliberate, and every name another indexed module takes from this
one (`from m import name`, `m.name`, or a star import of a module without `__all__`): a re-export
kept for compatibility. An import that binds a module of the workspace itself also stays: unused,
its only effect is running that module (registering signals, types, plugins). A statement whose
names are all unused loses its lines; one with some used names is rewritten to keep exactly those.

Two more re-exports stay, found by removing flask 3.1.1's imports with its `# noqa` marks taken
off: `from m import X as X` (the typed-package way to say "re-exported": flask's
`blueprints.BlueprintSetupState`, which its docs autodoc from there), and every import of a module
that holds nothing but imports and that no module of the workspace imports (a shim for whoever
loads it by name: flask's test app `helloworld/wsgi.py` is one line, `from hello import app`, and
`flask run` finds `app` in it; removing it failed test_scriptinfo). A shim the workspace imports
is judged by what the workspace takes from it.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass

from reference_host.providers.editing import split_lines
from reference_host.providers.pyindex.chains import CALL
from reference_host.providers.pyindex.facts import ModuleFacts, Span
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.tokens import Alias, Source, import_aliases


@dataclass(frozen=True)
class ImportFix:
    """Replace lines first..last (inclusive, whole lines) of a file with *text* ('' deletes)."""

    first: int
    last: int
    text: str
    removed: tuple[str, ...]


# a no-qa comment alone, or one listing codes (flake8 and ruff call an unused import F401)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


def _noqa_keeps(line: str) -> bool:
    """True when *line* has a `# noqa` comment that covers unused imports (F401)."""
    for match in _NOQA.finditer(line):
        codes = match.group("codes")
        if codes is None or "F401" in re.split(r"[\s,]+", codes.strip().upper()):
            return True
    return False


def _statement(facts: ModuleFacts, span: Span) -> tuple[str, int, str | None]:
    imports = [i for i in facts.imports if i.span == span]
    head = imports[0]
    return head.module, head.level, None if head.name is None else "from"


def _rewrite(module: str, level: int, kind: str | None, kept: list[Alias], parens: bool) -> str:
    names = []
    for alias in kept:  # `x as x` and `import a.b as a` keep their `as`: neither is `x` / `a.b`
        names.append(f"{alias.name} as {alias.bound}" if alias.explicit else alias.name)
    if kind is None:
        return f"import {', '.join(names)}"
    source = "." * level + module
    single = f"from {source} import {', '.join(names)}"
    if not parens or len(single) <= 88:
        return single
    return "from {} import (\n{})".format(source, "".join(f"    {n},\n" for n in names))


def may_lose_imports(path: str, facts: ModuleFacts) -> bool:
    """False when the facts alone show *path* keeps every import: an `__init__.py`, a file that
    did not parse, or one whose imports all bind names it uses or exports. Only the others need
    their text read and lexed (on sympy, 1,500 files to read become a few dozen)."""
    if path.endswith("__init__.py") or facts.error is not None or not facts.scopes:
        return False
    used = {chain[0] for chain in facts.uses.chains}
    exported = set(facts.all_names or [])
    bound = facts.scopes[0].bindings
    return any(b[0] == "import" and n not in used and n not in exported for n, b in bound.items())


def unused_import_fixes(
    path: str, facts: ModuleFacts, text: str, taken: Set[str] = frozenset()
) -> list[ImportFix]:
    """The line replacements removing *path*'s unused imports (empty when none, or in doubt);
    *taken* are names other modules import from *path* (`taken_elsewhere`), which stay."""
    if not may_lose_imports(path, facts):
        return []
    used = {chain[0] for chain in facts.uses.chains}
    exported = set(facts.all_names or []) | taken
    source = Source(text)  # only the import statements are lexed
    lines = split_lines(text)  # as the parser and the host count lines (a form feed is not one)
    fixes: list[ImportFix] = []
    for span in sorted({i.span for i in facts.imports if i.scope == 0}):
        module, level, kind = _statement(facts, span)
        if module == "__future__" or span[1] != 0:
            continue
        tail = lines[span[2]][span[3] :].strip() if span[2] < len(lines) else ""
        if tail and not tail.startswith("#"):
            continue  # another statement shares the line (`import a; x = 1`)
        if any(_noqa_keeps(line) for line in lines[span[0] : span[2] + 1]):
            continue  # marked as deliberate: a re-export or an import for its side effects
        tokens = source.within(span)
        if tokens is None:
            continue
        aliases, parens = import_aliases(tokens, span)
        if not aliases or any(a.name == "*" for a in aliases):
            continue
        outside = "\n".join(lines[: span[0]] + lines[span[2] + 1 :])
        unused = [
            a
            for a in aliases
            if a.bound not in used
            and a.bound not in exported
            and not (a.explicit and a.bound == a.name)  # `X as X`: a re-export
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
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
    for fix in sorted(fixes, key=lambda f: f.first, reverse=True):
        ending = "\n" if fix.text else ""
        lines[fix.first : fix.last + 1] = [fix.text + ending] if fix.text else []
    return "".join(lines)


def kept_imports(index: PythonIndex, candidates: dict[str, set[str]]) -> dict[str, dict[str, str]]:
    """Of the names each file would lose (*candidates*: path -> names), those that stay, each with
    why: another module takes it from the file (`taken_elsewhere`), or it binds a module of the
    workspace (imported for its side effects, as far as anyone can tell)."""
    kept: dict[str, dict[str, str]] = {}
    for path in _unimported_shims(index, candidates):
        why = "a module of nothing but imports that no module imports: a shim read by name"
        kept[path] = dict.fromkeys(candidates[path], why)
    for path, names in taken_elsewhere(index, candidates).items():
        for name in names:
            kept.setdefault(path, {})[name] = "other modules import it from here"
    for path, names in candidates.items():
        bindings = index.files[path].facts.scopes[0].bindings
        for name in names:
            binding = bindings.get(name)
            if binding is None or binding[0] != "import":
                continue
            target = index.import_target(path, binding, 0)
            module = target[1] if target is not None and target[0] == "module" else None
            if module is None and binding[2] is None:
                module = _sibling(index, path, str(binding[1]))
            if module is not None and module != path:
                why = f"it imports {module}, which may be imported for its side effects"
                kept.setdefault(path, {}).setdefault(name, why)
    return kept


def _unimported_shims(index: PythonIndex, candidates: dict[str, set[str]]) -> list[str]:
    """The *candidates* that hold nothing but imports (a docstring, `__all__`) and that no
    indexed module imports (`import m`, `from m import x`, `from pkg import m`)."""
    shims = set()
    for path in candidates:
        facts = index.files[path].facts
        bound = facts.scopes[0].bindings
        if (
            not facts.defs
            and not facts.uses.chains
            and all(b[0] == "import" or n == "__all__" for n, b in bound.items())
        ):
            shims.add(path)
    for path, entry in index.files.items():
        for imp in entry.facts.imports if shims else ():
            absname = index.absolute_module(path, imp.module, imp.level)
            if not absname:
                continue
            for dotted in (absname, f"{absname}.{imp.name}" if imp.name else absname):
                shims.discard(index.resolve_module(dotted, path) or "")
    return sorted(shims)


def _sibling(index: PythonIndex, path: str, module: str) -> str | None:
    """The file beside *path* that a plain `import module` the index could not resolve may
    load: Python 2's implicit relative import, or a directory put on `sys.path` (Salt's vendored
    `vsanapiutils.py` imports `vsanmgmtObjects` beside it to register types)."""
    folder = path.rpartition("/")[0]
    stem = f"{folder}/{module.replace('.', '/')}" if folder else module.replace(".", "/")
    for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
        if candidate in index.files:
            return candidate
    return None


def taken_elsewhere(index: PythonIndex, candidates: dict[str, set[str]]) -> dict[str, set[str]]:
    """Of the names each file would lose (*candidates*: path -> names), those another indexed
    module takes from it: `from m import name`, `m.name` (its chain resolved to the module), or
    `from m import *` of a module without `__all__` (every public name)."""
    wanted = {name for names in candidates.values() for name in names}
    taken: dict[str, set[str]] = {}

    def holder(path: str, module: str, level: int) -> str | None:
        absname = index.absolute_module(path, module, level)
        found = index.resolve_module(absname, path) if absname else None
        return found if found in candidates and found != path else None

    for path, entry in index.files.items():
        facts = entry.facts
        for imp in facts.imports:
            if imp.name is None or (imp.name != "*" and imp.name not in wanted):
                continue
            source = holder(path, imp.module, imp.level)
            if source is None:
                continue
            if imp.name != "*":
                names = {imp.name} & candidates[source]
            elif index.files[source].facts.all_names is None:
                names = {n for n in candidates[source] if not n.startswith("_")}
            else:
                names = set()
            taken.setdefault(source, set()).update(names)
        if not any(wanted.intersection(chain[1:]) for chain in facts.uses.chains):
            continue
        for use in facts.uses:
            for k in range(1, len(use.chain)):
                name = use.chain[k]
                if name not in wanted or use.chain[k - 1] == CALL:
                    continue
                target, consumed = index.resolve_chain(path, use.scope, use.chain[:k])
                if (
                    target is not None
                    and consumed == k
                    and target[0] == "module"
                    and target[1] != path
                    and name in candidates.get(target[1], ())
                ):
                    taken.setdefault(target[1], set()).add(name)
    return {path: names for path, names in taken.items() if names}
