"""`python/broken-import`: imports that a change leaves pointing at nothing.

pyflakes reads one file at a time, so a change that deletes or moves a module, or removes a
top-level name from one, passed the check while unchanged files still imported it: deleting
`b.py` beside a `c.py` holding `from b import X` was `allow`. This rule looks across files, and
only at what the change takes away: the modules the before-state had and the after-state has
not (by every dotted name `pyindex.modules` gives a path), and the top-level names a changed
module defined before and no longer does. Every after-state Python file whose import statements
spell one of those names is parsed, and each import that needed one of them is a finding at the
import, an error (it raises when the line runs). Everything it reports is brought by the change.

Resolution is kept narrow so that a finding is never a guess about `sys.path`:
- a relative import is resolved from the importing file's package;
- a dotted absolute name counts when its first part is still a regular package of the
  workspace (a folder with `__init__.py`, which shadows anything installed by that name);
- a plain name (`import helpers`) counts only from a file in the folder the module was in
  (a script, or pytest's rootdir-style imports, finds it there);
- an import inside `try:` that handles `ImportError` (or any exception) is an optional import,
  and one under `if TYPE_CHECKING:` never runs: neither is reported;
- a name removed from a module is reported by the same rules as the module: `from helpers
  import X` only from the folder of the `helpers.py` that lost it;
- a module that defines `__getattr__`, star-imports or writes `globals()` (or `vars()` with no
  argument, `exec`) may still provide a name it no longer spells, so no name removed from it is
  reported; `vars(obj)` and reading `globals()` (`"X" in globals()`, `globals().get(k)`) do
  not count.

A use of a removed name through the module object (`text.get_valid_filename`), and a star
import of a module whose `__all__` still lists it, are `check_uses.py`'s.

Import words are taken from each blob once and kept by blob id (`ImportWords`): an evaluation
then reads only the files it has not met and the few whose import lines spell a removed name,
or the last part of a module that lost names (`text` of `from django.utils import text`).
"""

from __future__ import annotations

import ast
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field

from reference_host.providers.pyindex.modules import ModuleName, module_names
from reference_host.providers.python_rules import BROKEN_IMPORT, RawFinding, decode_source

_WORDS_KEPT = 50_000  # blob ids whose import words are kept, per provider process
_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[\w. \t]+?[ \t]+)?import\b[^\n]*", re.M)
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_CONTINUED = re.compile(rb"\([^)]*\)", re.S)
_DYNAMIC = frozenset({"globals", "vars", "exec"})
_READS = frozenset({"get", "keys", "values", "items", "copy", "__contains__"})
_OWN_SCOPE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_OPTIONAL = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


class ImportWords:
    """blob id -> every word on the blob's import lines (a superset: an `import` inside a string
    counts too), bounded LRU. A file whose words miss every removed name imports none of them."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, frozenset[bytes]] = OrderedDict()

    def known(self, blob: str) -> frozenset[bytes] | None:
        found = self._kept.get(blob)
        if found is not None:
            self._kept.move_to_end(blob)
        return found

    def learn(self, blob: str, data: bytes) -> frozenset[bytes]:
        words: set[bytes] = set()
        for line in _IMPORT_LINE.finditer(data):
            text = line.group(0)
            if b"(" in text:  # a parenthesised list may run over several lines
                tail = _CONTINUED.match(data, line.start() + text.index(b"("))
                text = text + (tail.group(0) if tail else b"")
            words.update(_WORD.findall(text))
        found = frozenset(words)
        self._kept[blob] = found
        while len(self._kept) > _WORDS_KEPT:
            self._kept.popitem(last=False)
        return found


@dataclass
class Removed:
    """What a change takes away: module name -> the before path that provided it, and module
    name -> top-level names it no longer defines."""

    modules: dict[str, str] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)
    exported: dict[str, set[str]] = field(default_factory=dict)  # ... still listed in __all__

    def words(self) -> set[bytes]:
        """Words an import line needs for a finding: a removed module's or name's, or (a use
        `m.X`, a star import) the last part of a module that lost names."""
        found = {name.rpartition(".")[2].encode() for name in (*self.modules, *self.names)}
        found.update(n.encode() for names in self.names.values() for n in names)
        return found

    def __bool__(self) -> bool:
        return bool(self.modules or self.names)


def top_level_names(tree: ast.Module, lazy: bool = False) -> set[str] | None:
    """Names a module binds at import time; None when it may provide names it does not spell
    (a module `__getattr__` too, unless *lazy*: it answers only for attributes not set)."""
    names: set[str] = set()
    stack: list[ast.AST] = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue  # what a body binds is not the module's
        if isinstance(node, _OWN_SCOPE):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.partition(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    reading = _reads(tree)
    for node in ast.walk(tree):  # `global X` in a function; `globals()`, `vars()`, `exec`
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif (isinstance(node, ast.Name) and node.id in _DYNAMIC and id(node) not in reading) or (
            isinstance(node, ast.Subscript) and _is_own_module(node)
        ):
            return None
    return None if "__getattr__" in names and not lazy else names


def _reads(tree: ast.Module) -> set[int]:
    """ids of the `vars` / `globals` names that only read: `vars(obj)` (an object's attributes;
    Django: 10 modules), `"__file__" in globals()`, `globals()[k]`, `globals().get(k)` (Django's
    django/utils/version.py). `vars()` at module level and any other use of `globals()` may
    write the module's namespace."""
    found: set[int] = set()

    def bare(node: ast.expr, name: str) -> int | None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            return id(node.func) if not node.args and not node.keywords else None
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            found.update([id(node.func)] if node.func.id == "vars" else [])  # vars(obj)
        elif isinstance(node, ast.Compare) and all(
            isinstance(o, ast.In | ast.NotIn) for o in node.ops
        ):
            found.update(i for c in node.comparators if (i := bare(c, "globals")) is not None)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            found.update(i for i in [bare(node.value, "globals")] if i is not None)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _READS
        ):
            found.update(i for i in [bare(node.func.value, "globals")] if i is not None)
    return found


def _is_own_module(node: ast.Subscript) -> bool:
    """`sys.modules[__name__]`: the module object itself, open to any attribute."""
    value, key = node.value, node.slice
    return (
        isinstance(value, ast.Attribute)
        and value.attr == "modules"
        and isinstance(key, ast.Name)
        and key.id == "__name__"
    )


def parse(data: bytes) -> ast.Module | None:
    text, _ = decode_source(data)
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the file's own syntax finding says so, when it is part of the change


class Resolver:
    """Dotted module names of the before- and after-state paths, and which of them an import
    can be said to mean (the module docstring's rules)."""

    def __init__(self, before: list[str], after: list[str]) -> None:
        self.before = module_names(before)
        self.after = module_names(after)
        self.after_modules = _by_name(self.after)
        self.before_modules = _by_name(self.before)

    def gone(self, path: str) -> dict[str, str]:
        """Dotted names the before path *path* provided that no after-state path provides."""
        info = self.before.get(path)
        if info is None:
            return {}
        names = (info.primary, *info.aliases)
        return {name: path for name in names if name not in self.after_modules}

    def definite(self, name: str, importer: str, relative: bool) -> bool:
        if relative:
            return True
        top = name.partition(".")[0]
        provider = self.after_modules.get(top)
        if "." in name and provider is not None and provider.is_package:
            return True  # a regular package of the workspace: the name cannot come from elsewhere
        gone_top = self.before_modules.get(top)
        if gone_top is None:
            return False
        folder = gone_top.path.rpartition("/")[0]
        if gone_top.is_package:
            folder = folder.rpartition("/")[0]
        return importer.rpartition("/")[0] == folder

    def package_of(self, importer: str) -> str | None:
        info = self.after.get(importer)
        return info.package if info is not None else None


def _by_name(names: dict[str, ModuleName]) -> dict[str, ModuleName]:
    found: dict[str, ModuleName] = {}
    for info in names.values():
        for name in (info.primary, *info.aliases):
            found.setdefault(name, info)
    return found


def broken_imports(
    importer: str, tree: ast.Module, removed: Removed, resolver: Resolver
) -> list[RawFinding]:
    """The findings of one after-state file: each import that needs a removed module or name."""
    findings: list[RawFinding] = []
    package = resolver.package_of(importer)
    for node, optional in _imports(tree):
        if optional:
            continue
        for target, message in _needs(node, package, removed, resolver, importer):
            findings.append(
                RawFinding(
                    BROKEN_IMPORT,
                    message,
                    (node.lineno - 1, node.col_offset),
                    ((node.end_lineno or node.lineno) - 1, node.end_col_offset or 0),
                    f"import:{target}",
                )
            )
    return findings


def _needs(
    node: ast.Import | ast.ImportFrom,
    package: str | None,
    removed: Removed,
    resolver: Resolver,
    importer: str,
) -> Iterator[tuple[str, str]]:
    """(what, message) for each removed module or name *node* needs."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            gone = _gone_prefix(alias.name, removed, resolver, importer, False)
            if gone is not None:
                yield gone, _module_message(alias.name, gone, removed)
        return
    relative = node.level > 0
    if relative:
        if not package:  # not in a package: a relative import fails there anyway
            return
        parts = package.split(".") if package else []
        if node.level - 1 > len(parts):
            return
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, node.module] if node.module else parts)
    else:
        base = node.module or ""
    if not base:
        return
    gone = _gone_prefix(base, removed, resolver, importer, relative)
    if gone is not None:
        yield gone, _module_message(base, gone, removed)
        return
    sure = resolver.definite(base, importer, relative)  # names: only from what it surely means
    for alias in node.names:
        if alias.name == "*":
            if sure and removed.exported.get(base):
                listed = ", ".join(sorted(removed.exported[base]))[:200]
                yield (
                    f"{base}:*",
                    f"'*' is imported from {base}, whose __all__ still lists {listed}, "
                    "but this change removes it from that module",
                )
            continue
        sub = f"{base}.{alias.name}"
        if sub in removed.modules and resolver.definite(sub, importer, relative):
            yield sub, _module_message(sub, sub, removed)
        elif (
            sure and alias.name in removed.names.get(base, ()) and sub not in resolver.after_modules
        ):
            yield (
                f"{base}:{alias.name}",
                f"'{alias.name}' is imported from {base}, but this change removes it from that module",
            )


def _gone_prefix(
    name: str, removed: Removed, resolver: Resolver, importer: str, relative: bool
) -> str | None:
    parts = name.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        if prefix in removed.modules and resolver.definite(prefix, importer, relative):
            return prefix
    return None


def _module_message(imported: str, gone: str, removed: Removed) -> str:
    where = removed.modules[gone]
    return f"'{imported}' is imported, but this change removes module {gone} ({where[:200]})"


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement, and whether it is optional (under a `try` that handles
    ImportError, or an `if TYPE_CHECKING:` body)."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, optional = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, optional
            continue
        if isinstance(node, ast.Try | ast.TryStar):
            guarded = optional or any(catches(h, None) for h in node.handlers)
            stack.extend((child, guarded) for child in node.body)
            for rest in (*node.handlers, *node.orelse, *node.finalbody):
                stack.append((rest, optional))
            continue
        if isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend((child, True) for child in node.body)
            stack.extend((child, optional) for child in node.orelse)
            continue
        stack.extend((child, optional) for child in ast.iter_child_nodes(node))


def catches(handler: ast.ExceptHandler, names: frozenset[str] | None) -> bool:
    """Whether *handler* catches one of *names* (default: ImportError or a base of it)."""
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for kind in kinds:
        name = kind.attr if isinstance(kind, ast.Attribute) else getattr(kind, "id", None)
        if name in (_OPTIONAL if names is None else names):
            return True
    return False


def is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
