"""`python/broken-call`: calls that a change to a function's parameters leaves raising TypeError.

A change that adds a required parameter to a module-level function, removes or renames one, or
makes one keyword-only, passes pyflakes while every caller it did not touch still calls the old
way: the first call raises `TypeError` at run time. With both states of a changed module read
(`check_callers.across_files` reads the before-state under either comparison), the functions
whose parameters changed are compared with each call that can be tied to them for sure, in the
changed module itself and in the files that import it:

- the function is defined once at module level, undecorated (a decorator may replace the
  signature: `functools.wraps`, `click.command`, `pytest.fixture`), and is a plain function, not
  a class;
- the call names it directly: `f(...)` with `f` bound only by `from module import f [as g]` (or,
  in its own module, by its definition), or `m.f(...)` with `m` bound only by an import of the
  module; a module that binds the name any other way (an assignment, a parameter, a loop
  variable, a nested definition) is left alone;
- a call that unpacks (`*args`, `**kwargs`) is not judged: its count is not known.

The judgement is Python's own binding of arguments to parameters (positional-only, defaults,
keyword-only, `*args` and `**kwargs`); a call reported here raises as soon as it runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    """What a function accepts, as Python binds a call to it."""

    positional: tuple[str, ...]  # positional-only, then positional-or-keyword, in order
    positional_only: int  # how many of `positional` cannot be passed by keyword
    required_positional: int  # those without a default (always the first ones)
    keyword_only: tuple[str, ...]
    required_keyword: frozenset[str]
    star_args: bool
    star_kwargs: bool

    @classmethod
    def of(cls, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature:
        args = node.args
        positional = tuple(a.arg for a in (*args.posonlyargs, *args.args))
        required_kw = frozenset(
            a.arg
            for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if default is None
        )
        return cls(
            positional=positional,
            positional_only=len(args.posonlyargs),
            required_positional=len(positional) - len(args.defaults),
            keyword_only=tuple(a.arg for a in args.kwonlyargs),
            required_keyword=required_kw,
            star_args=args.vararg is not None,
            star_kwargs=args.kwarg is not None,
        )

    def problem(self, call: ast.Call) -> str | None:
        """Why binding *call*'s arguments raises TypeError, or None when it binds (or when the
        call unpacks, so its arguments cannot be counted)."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            return None
        passed = len(call.args)
        if passed > len(self.positional) and not self.star_args:
            return (
                f"takes at most {len(self.positional)} positional argument(s), "
                f"but this call passes {passed}"
            )
        bound = set(self.positional[:passed])
        by_keyword = self.positional[self.positional_only :]
        for keyword in call.keywords:
            name = keyword.arg
            assert name is not None
            if name in bound:
                return f"gets two values for parameter '{name}'"
            if name not in by_keyword and name not in self.keyword_only and not self.star_kwargs:
                return f"has no parameter '{name}' this call can pass by keyword"
            bound.add(name)
        missing = [p for p in self.positional[: self.required_positional] if p not in bound]
        missing += sorted(self.required_keyword - bound)
        if missing:
            return f"needs '{missing[0]}', which this call does not pass"
        return None


def plain_functions(tree: ast.Module) -> dict[str, Signature]:
    """The module's undecorated functions and plain classes defined once at its top level, by
    name (a class by what calling it takes); a name the module binds any other way is left out."""
    found = {
        node.name: Signature.of(node)
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.decorator_list
    }
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    for name, node in classes.items():
        init = _plain_init(node, classes)
        if init is not None:
            found[name] = init
    bindings = Bindings.of(tree) if found else None
    return {n: sig for n, sig in found.items() if bindings and not bindings.otherwise(n)}


def _plain_init(node: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> Signature | None:
    """What calling the class takes: its own undecorated `__init__` without `self`, for a class
    that nothing else can stand between the call and `__init__`: no decorator, no metaclass or
    class keywords, no `__new__` or `__call__`, and only bases that are such classes of the same
    module (an `Enum`, a `NamedTuple` or a model with a metaclass answers a call its own way)."""
    if node.decorator_list or node.keywords:
        return None
    seen: set[str] = set()
    chain = [node]
    while chain:
        current = chain.pop()
        if current.name in seen:
            continue  # a base reached twice (a diamond)
        if current.decorator_list or current.keywords:
            return None
        seen.add(current.name)
        members = {
            n.name for n in current.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        if members & {"__new__", "__call__", "__init_subclass__"}:
            return None
        for base in current.bases:
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            if not isinstance(base, ast.Name) or base.id not in classes:
                return None
            chain.append(classes[base.id])
    init = next(
        (
            n
            for n in node.body
            if isinstance(n, ast.FunctionDef) and n.name == "__init__" and not n.decorator_list
        ),
        None,
    )
    if init is None or not (init.args.posonlyargs or init.args.args):
        return None
    full = Signature.of(init)
    return Signature(
        positional=full.positional[1:],
        positional_only=max(0, full.positional_only - 1),
        required_positional=max(0, full.required_positional - 1),
        keyword_only=full.keyword_only,
        required_keyword=full.required_keyword,
        star_args=full.star_args,
        star_kwargs=full.star_kwargs,
    )


def changed_signatures(
    before: ast.Module, after: ast.Module
) -> dict[str, tuple[Signature, Signature]]:
    """name -> (before, after) of the plain functions whose parameters the change altered."""
    return changed_between(plain_functions(before), plain_functions(after))


def changed_between(
    old: dict[str, Signature], new: dict[str, Signature]
) -> dict[str, tuple[Signature, Signature]]:
    return {n: (old[n], s) for n, s in new.items() if n in old and old[n] != s}


@dataclass(frozen=True)
class Bindings:
    """How often each name of a module is defined (`def`/`class`, at any depth), and which names
    it binds any other way (assigned, deleted, a parameter, `global`/`nonlocal`): one walk of the
    tree, asked once per name (walking it per name made a release-sized change take minutes)."""

    defined: dict[str, int]
    other: frozenset[str]

    @classmethod
    def of(cls, tree: ast.Module) -> Bindings:
        defined: dict[str, int] = {}
        other: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined[node.name] = defined.get(node.name, 0) + 1
                if not isinstance(node, ast.ClassDef):
                    args = node.args
                    every = (*args.posonlyargs, *args.args, *args.kwonlyargs)
                    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
                    other.update(a.arg for a in (*every, *extra))
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                other.add(node.id)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                other.update(node.names)
        return cls(defined, frozenset(other))

    def otherwise(self, name: str, definitions: int = 1) -> bool:
        """Whether *name* is bound other than by an import and *definitions* definitions (the
        one top-level `def` of a changed module; none in a file that imports the name)."""
        return name in self.other or self.defined.get(name, 0) > definitions


def calls_of(
    tree: ast.Module, direct: dict[str, str], modules: dict[str, str]
) -> Iterator[tuple[ast.Call, str, str]]:
    """(call, module, function) for each call of *tree* through *direct* (local name -> "module
    function" it imports, or defines) or *modules* (local name -> module it imports)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in direct:
            module, _, function = direct[func.id].partition(" ")
            yield node, module, function
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
        ):
            yield node, modules[func.value.id], func.attr
