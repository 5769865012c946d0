"""Expression shapes the fact collector reads: name chains (`a.b().c`) and annotations.

A chain is the tuple of names an expression starts from (`CALL` marks a call); an annotation
names a class (`X`, `X | None`, `Optional[X]`, `"X"`) or, for iterator-like generics, an element
class. Anything else yields None, and the collector leaves it unresolved.
"""

from __future__ import annotations

import ast

CALL = "()"  # chain marker: the result of calling what precedes it


def split_chain(node: ast.expr) -> tuple[tuple[str, ...] | None, ast.Call | None]:
    """`a.b().c` as (("a", "b", "()", "c"), the `a.b()` call node still to visit).

    None when the expression does not start at a plain name (or a call of one).
    """
    kind = type(node)
    if kind is ast.Name:  # the most common chain by far: one name
        return (node.id,), None  # type: ignore[attr-defined]
    parts: list[str] = []
    while kind is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        kind = type(node)
    parts.reverse()
    if kind is ast.Name:
        return (node.id, *parts), None  # type: ignore[attr-defined]
    if isinstance(node, ast.Call):
        inner, _root = split_chain(node.func)
        if inner is not None:
            return (*inner, CALL, *parts), node
    return None, None


def name_chain(node: ast.expr) -> tuple[str, ...] | None:
    return split_chain(node)[0]


ITERABLES = frozenset(
    {"Iterator", "Iterable", "Generator", "AsyncIterator", "AsyncIterable", "AsyncGenerator"}
    | {"list", "List", "Sequence", "set", "Set", "frozenset", "FrozenSet", "Collection"}
)


def element_chain(node: ast.expr | None) -> tuple[str, ...] | None:
    """The element class of `Iterator[C]`, `list[C]`, `Generator[C, ...]` and the like."""
    if not isinstance(node, ast.Subscript):
        return None
    outer = name_chain(node.value)
    if not outer or outer[-1] not in ITERABLES:
        return None
    inner = (
        node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
    )
    return annotation_chain(inner)


def is_type_checking(test: ast.expr) -> bool:
    chain = name_chain(test)
    return chain is not None and chain[-1] == "TYPE_CHECKING"


def annotation_chain(node: ast.expr | None) -> tuple[str, ...] | None:
    """The class an annotation names, unwrapping `X | None` and `Optional[X]`."""
    if node is None:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = node.left, node.right
        if isinstance(right, ast.Constant) and right.value is None:
            return annotation_chain(left)
        if isinstance(left, ast.Constant) and left.value is None:
            return annotation_chain(right)
        return None
    if isinstance(node, ast.Subscript):
        outer = name_chain(node.value)
        if outer and outer[-1] == "Optional":
            return annotation_chain(node.slice)
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value.strip()
        parts = tuple(text.split("."))
        return parts if all(p.isidentifier() for p in parts) else None
    return name_chain(node)
