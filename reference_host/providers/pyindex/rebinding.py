"""Whether a renamed definition's name is bound again in the scope that defines it.

The index keeps the first `def`/`class`/import binding of a name and ignores later assignments
(for inspect, `try: import x` / `except: x = None` should still resolve to the import). A rename
cannot: after `f = cache(f)`, a property's `@x.setter` twin, an `@overload` series, a fallback
`def` in an `except ImportError:` branch or a `global f` that assigns it elsewhere, uses of `f`
read the other binding, and renaming only the definition would split them (`print(f)` would
print the undecorated function under the new name). So the defining scope is read once more,
statement by statement, with the parser: any other binding of the name refuses the rename.

So does a decorator known to register a definition under its own name (`NAME_READERS`): pytest
requests `@pytest.fixture def runner` by the parameter name `runner`, which no use resolves to,
and a click command, a Flask endpoint or a Django template filter is named after its function;
renaming those changes what the program is called by (click's tests errored after such a
rename). An explicit `name=` (or a click command's name argument) makes it safe.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from reference_host.providers.editing import split_lines
from reference_host.providers.pyindex.chains import name_chain
from reference_host.providers.pyindex.tokens import Pos

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NESTED = (*_SCOPES, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scope_of(tree: ast.Module, line: int, name: str) -> tuple[ast.AST, ast.AST] | None:
    """The definition of *name* whose `def`/`class` keyword is on *line* (one-based), and the
    node whose scope holds it (the module, a class or a function)."""
    parents: dict[ast.AST, ast.AST] = {}
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES) and child.name == name and child.lineno == line:
                holder = node
                while not isinstance(holder, (ast.Module, *_SCOPES)):
                    holder = parents[holder]
                return child, holder
            parents[child] = node
            stack.append(child)
    return None


def _bindings(node: ast.AST, name: str) -> Iterator[ast.AST]:
    """Every node binding *name* in *node*'s own scope (not inside nested scopes)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            if child.name == name:
                yield child
            for part in (*child.decorator_list, *getattr(child, "bases", ())):
                yield from _bindings_in_expr(part, name)
            continue
        if isinstance(child, _NESTED):
            continue
        if _binds(child, name):
            yield child
        yield from _bindings(child, name)


def _binds(node: ast.AST, name: str) -> bool:
    """True when *node* itself binds *name*: an assignment or `del` target, an import, an
    `except ... as`, a `match` capture."""
    if isinstance(node, ast.Name):
        return node.id == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".")[0]) == name
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name == name
    return False


def _bindings_in_expr(node: ast.AST, name: str) -> Iterator[ast.AST]:
    """`:=` targets inside a decorator or base expression bind in the enclosing scope."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.NamedExpr) and _binds(sub.target, name):
            yield sub


def rebound(text: str, line: int, name: str, overloads: list[Pos] | None = None) -> str | None:
    """Why renaming the definition of *name* at zero-based *line* would not rename every way it
    is reached (None when nothing says so): another binding of *name* in its scope, a decorator
    that takes the definition's own name, or a file that cannot be parsed. The other members of
    a `typing.overload` set are not in the way: their `def` positions (zero-based line,
    code-point column) are added to *overloads*, to be renamed with it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return "its file does not parse"
    found = _scope_of(tree, line + 1, name)
    if found is None:
        return "its definition cannot be found in the source"
    definition, holder = found
    for node in ast.walk(tree):  # `global f` / `nonlocal f` in an inner function may assign it
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            keyword = type(node).__name__.lower()
            return f"`{keyword} {name}` on line {node.lineno} may assign it elsewhere"
    others = [node for node in _bindings(holder, name) if node is not definition]
    if others and overloads is not None and _overload_set([definition, *others]):
        lines = split_lines(text)
        for node in others:
            assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            raw = lines[node.lineno - 1].encode()
            overloads.append(
                (node.lineno - 1, len(raw[: node.col_offset].decode(errors="replace")))
            )
        others = []
    for node in others:
        return f"it is bound again on line {getattr(node, 'lineno', '?')}"
    assert isinstance(definition, _SCOPES)
    for decorator in definition.decorator_list:
        reader = _name_reader(decorator)
        if reader is not None:
            return (
                f"its decorator @{reader} (line {decorator.lineno}) may take its name from the "
                "definition (a pytest fixture is requested by that name, a click command, Flask "
                "endpoint or template filter is called by it)"
            )
    return None


def _overload_set(nodes: list[ast.AST]) -> bool:
    """True when *nodes* are functions all decorated `@overload` but at most one (the
    implementation): one name, one definition to the program."""
    if not all(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in nodes):
        return False
    plain = [
        n
        for n in nodes
        if not any(
            (name_chain(d) or ())[-1:] == ("overload",)
            for d in n.decorator_list  # type: ignore[attr-defined]
        )
    ]
    return len(plain) <= 1


# decorators that register a definition under its own `__name__` unless told another name
NAME_READERS = frozenset(
    {"fixture", "command", "group", "route", "get", "post", "put", "patch", "delete"}
    | {"filter", "simple_tag", "inclusion_tag", "tag", "task", "shared_task"}
    | {"hookimpl", "hookspec"}
)


def _name_reader(decorator: ast.expr) -> str | None:
    """The dotted name of *decorator* when it is one of `NAME_READERS` not given an explicit
    name (`name=`/`endpoint=`, or a string first argument of a click command)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    chain = name_chain(call.func if call is not None else decorator)
    if not chain or chain[-1] not in NAME_READERS:
        return None
    if call is not None:
        if any(k.arg in ("name", "endpoint") for k in call.keywords):
            return None
        first = call.args[0] if call.args else None
        if chain[-1] in ("command", "group") and isinstance(first, ast.Constant):
            return None
    return ".".join(chain)
