"""`python/broken-import` past the import line: a removed name used through a module object.

Measured on attrs and Django (bench/broken_imports_real.py), most importers of a module do not
spell the names they use on the import line: `from django.utils import text` ...
`text.get_valid_filename(...)`, `import pkg.b as m; m.X`, `import pkg.b` ... `pkg.b.X`, or
`from . import setters` ... `setters.validate` at attrs' module level. Removing `X` left all of
them raising AttributeError when the use ran, and no finding. This module reports such a use
`m.X` (load context) at the use, when it is sure that `m` is the module:

- `m` is bound in the file only by imports of that same module (none optional), one of them at
  module level or in a function around the use (Django imports lazily inside functions): any
  other binding of the name anywhere in the file (an assignment, a parameter, a loop target,
  another import, `del`) and the name is not followed;
- every step from the bound object to the module (`pkg` -> `pkg.b`) goes through a regular
  package whose `__init__.py` does not bind the child's name otherwise than by importing that
  very submodule (and is not dynamic: `__getattr__`, star-imports, `globals()`);
- the use is not in an annotation (never evaluated under `from __future__ import annotations`
  or 3.14's lazy annotations), under `if TYPE_CHECKING:`, or in a `try` that handles
  AttributeError; and the file neither spells the name as a string (`hasattr(m, "X")`) nor
  sets an attribute of that name (`m.X = ...`, a monkeypatch).

Also: a star import of a module whose `__all__` still lists a removed name raises at the star
import (`AttributeError: module 'attr.validators' has no attribute 'min_len'`).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from reference_host.providers.check_imports import (
    Removed,
    Resolver,
    catches,
    is_type_checking,
    top_level_names,
)
from reference_host.providers.python_rules import BROKEN_IMPORT, RawFinding

_GUARDS = frozenset({"AttributeError", "Exception", "BaseException"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# package -> (names its __init__ binds otherwise than as its submodules, None: any; whether it
# has a module `__getattr__`, which answers for a submodule not imported yet)
Shadows = dict[str, tuple[set[str] | None, bool]]


def literal_all(tree: ast.Module) -> set[str] | None:
    """The names of a literal top-level `__all__` (`=`, `+=`, `.extend`/`.append` of string
    literals); None when there is none or any part of it is computed."""
    found: set[str] | None = None
    for node in tree.body:
        value: ast.expr | None = None
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                continue
            value = node.value
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if not (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "__all__"
            ):
                continue
            if func.attr == "append" and len(node.value.args) == 1:
                value = ast.List(elts=node.value.args)
            elif func.attr == "extend" and len(node.value.args) == 1:
                value = node.value.args[0]
            else:
                return None
        else:
            continue
        if not isinstance(value, ast.List | ast.Tuple) or not all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
        ):
            return None
        found = (found or set()) | {
            e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        }
    return found


def package_shadows(tree: ast.Module, package: str) -> tuple[set[str] | None, bool]:
    """Names the `__init__.py` of *package* binds otherwise than by importing its own submodule
    of that name (`from . import b`, `from package import b`): such a name may not be the
    submodule (None: it may bind anything, top_level_names); and whether it defines a module
    `__getattr__` (attrs does: a submodule the importer imported itself is still the module)."""
    stripped = copy.deepcopy(tree)
    for node in ast.walk(stripped):
        if isinstance(node, ast.ImportFrom) and (
            (node.level == 1 and node.module is None)
            or (node.level == 0 and node.module == package)
        ):
            node.names = [a for a in node.names if a.asname not in (None, a.name) or a.name == "*"]
            if not node.names:  # keep the node a valid import binding nothing of the package's
                node.names = [ast.alias(name="__shadow_free__")]
    names = top_level_names(stripped, lazy=True)
    return names, names is not None and "__getattr__" in names


def _steps(start: str, module: str) -> Iterator[tuple[str, str]]:
    """(package, child) for each attribute step from the object of *start* down to *module*."""
    done = start.split(".")
    for child in module.split(".")[len(done) :]:
        yield ".".join(done), child
        done.append(child)


class _Bindings(ast.NodeVisitor):
    """Local names bound by imports of workspace modules: name -> (module, where attribute steps
    start), and every name bound otherwise (which disqualifies it)."""

    def __init__(self, importer: str, resolver: Resolver) -> None:
        self.importer = importer
        self.resolver = resolver
        self.package = resolver.package_of(importer)
        self.modules: dict[str, set[tuple[str, str]]] = {}
        self.scopes: dict[int, set[str]] = {}  # id(function or module) -> names it imports
        self.loaded: dict[tuple[int, str], set[str]] = {}  # (scope, name) -> modules imported
        self.other: set[str] = set()
        self.scope = 0
        self.optional = 0

    def _module_binding(
        self, name: str, module: str, start: str, spelled: str, relative: bool
    ) -> None:
        if self.optional or not self.resolver.definite(spelled, self.importer, relative):
            self.other.add(name)
            return
        self.modules.setdefault(name, set()).add((module, start))
        self.scopes.setdefault(self.scope, set()).add(name)
        self.loaded.setdefault((self.scope, name), set()).add(spelled)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.partition(".")[0]
            if alias.asname:
                self._module_binding(alias.asname, alias.name, top, alias.name, False)
            else:
                self._module_binding(top, top, top, alias.name, False)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._base(node)
        for alias in node.names:
            if alias.name == "*":
                continue
            bound = alias.asname or alias.name
            sub = f"{base}.{alias.name}" if base else ""
            if sub and sub in self.resolver.after_modules:
                self._module_binding(bound, sub, base, sub, node.level > 0)
            else:
                self.other.add(bound)

    def _base(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.package.split(".") if self.package else []
        if not self.package or node.level - 1 > len(parts):
            return ""
        parts = parts[: len(parts) - (node.level - 1)]
        return ".".join([*parts, node.module] if node.module else parts)

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        guarded = any(catches(h, None) for h in node.handlers)
        self.optional += guarded
        for child in node.body:
            self.visit(child)
        self.optional -= guarded
        for rest in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(rest)

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        dead = is_type_checking(node.test)
        self.optional += dead
        for child in node.body:
            self.visit(child)
        self.optional -= dead
        self.visit(node.test)
        for child in node.orelse:
            self.visit(child)

    def _scope(self, node: ast.AST) -> None:
        outer, self.scope = self.scope, id(node)
        self.generic_visit(node)
        self.scope = outer

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.other.add(node.name)
        self._scope(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.other.add(node.name)
        self._scope(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scope(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.other.add(node.id)

    def visit_arg(self, node: ast.arg) -> None:
        self.other.add(node.arg)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.other.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.other.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.other.update(node.names)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.other.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.other.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.other.add(node.rest)
        self.generic_visit(node)

    def sure(self) -> dict[str, tuple[str, str]]:
        """Names bound only by imports of one module each (where: `scopes`)."""
        return {
            name: next(iter(found))
            for name, found in self.modules.items()
            if name not in self.other and len(found) == 1
        }


def _uses(tree: ast.AST) -> Iterator[tuple[ast.Attribute, tuple[int, ...]]]:
    """Attribute loads that run when their line runs (not in annotations, not under
    `if TYPE_CHECKING:`, not in a `try` that handles AttributeError), with the ids of the
    module and the functions around them (the scopes whose imports they see)."""
    stack: list[tuple[ast.AST, tuple[int, ...]]] = [(tree, (0,))]
    while stack:
        node, seen = stack.pop()
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            yield node, seen
        if isinstance(node, _FUNCTIONS):
            seen = (*seen, id(node))
        if isinstance(node, ast.Try | ast.TryStar):
            body = [] if any(catches(h, _GUARDS) for h in node.handlers) else node.body
            rest = (*body, *node.handlers, *node.orelse, *node.finalbody)
            stack.extend((child, seen) for child in rest)
            continue
        if isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend((child, seen) for child in node.orelse)
            continue
        for name, child in ast.iter_fields(node):
            if name in ("annotation", "returns"):
                continue
            if isinstance(child, list):
                stack.extend((c, seen) for c in child if isinstance(c, ast.AST))
            elif isinstance(child, ast.AST):
                stack.append((child, seen))


def broken_uses(
    importer: str, tree: ast.Module, removed: Removed, resolver: Resolver, shadows: Shadows
) -> list[RawFinding]:
    """Each use `m.X` in *importer* of a name X the change removes from module m."""
    binds = _Bindings(importer, resolver)
    binds.visit(tree)
    bound = binds.sure()
    if not bound:
        return []
    spared = {  # spelled as a string (`hasattr(m, "X")`) or set here (`m.X = ...`): not sure
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    } | {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)
    }
    findings: list[RawFinding] = []
    for node, scopes in _uses(tree):
        path: list[str] = []
        inner: ast.expr = node.value
        while isinstance(inner, ast.Attribute):
            path.append(inner.attr)
            inner = inner.value
        if not isinstance(inner, ast.Name) or inner.id not in bound:
            continue
        if not any(inner.id in binds.scopes.get(scope, ()) for scope in scopes):
            continue  # imported only in another function: a NameError there, not this change's
        target, start = bound[inner.id]
        module = ".".join([target, *reversed(path)])
        if node.attr not in removed.names.get(module, ()) or node.attr in spared:
            continue
        if f"{module}.{node.attr}" in resolver.after_modules:
            continue  # a submodule of that name: the attribute may be set by its import
        loaded = set().union(*(binds.loaded.get((s, inner.id), ()) for s in scopes))
        if not all(_reaches(shadows, loaded, step) for step in _steps(start, module)):
            continue
        spelled = ast.unparse(node)[:200]
        findings.append(
            RawFinding(
                BROKEN_IMPORT,
                f"'{spelled}' is used from {module}, but this change removes "
                f"{node.attr} from that module",
                (node.lineno - 1, node.col_offset),
                ((node.end_lineno or node.lineno) - 1, node.end_col_offset or 0),
                f"use:{module}:{node.attr}",
            )
        )
    return findings


def _reaches(shadows: Shadows, loaded: set[str], step: tuple[str, str]) -> bool:
    """Whether attribute *step* (package, child) of a regular package surely is its submodule:
    nothing else binds the name there, and (with a module `__getattr__`) it was imported."""
    package, child = step
    if package not in shadows:
        return False
    names, lazy = shadows[package]
    if names is None or child in names:
        return False
    sub = f"{package}.{child}"
    return not lazy or any(m == sub or m.startswith(f"{sub}.") for m in loaded)


def parents(removed: Removed) -> set[str]:
    """The packages a use of a module that lost names may step through."""
    return {
        ".".join(parts[:end])
        for module in removed.names
        for parts in [module.split(".")]
        for end in range(1, len(parts))
    }
