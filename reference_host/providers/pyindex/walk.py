"""How the fact collector reaches every node: one handler per AST node type, looked up by type.

A node type the collector has a `visit_` method for is handled by it; every other type is walked
through the fields that may hold expressions or statements, in field order (the order uses are
recorded in). The types met most often (`Expr`, `Subscript`, `Compare`, `Dict`, `Return`, `List`
and a dozen more: about a third of Salt's nodes) have a walk written out for their fields, which
costs a fraction of the generic one (a `getattr` and a type test per field, a tuple per single
child); the rest use the generic walk. Constants are never dispatched (they hold no use), and
handlers are unbound functions kept per type, not bound methods on the collector: those would
make a reference cycle, and parse workers run without the cyclic collector.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

Handler = Callable[[Any, Any], None]

# Fields that hold no uses: contexts and operators are childless nodes, the rest plain values.
LEAF_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind", "id", "attr", "arg", "level"})
CONSTANT = ast.Constant


def nothing(collector: Any, node: Any) -> None:
    """Constants, contexts, operators, `pass`, an absent child: nothing to record, nothing below."""


class Handlers(dict[type, Handler]):
    """Handler by node type; a type not seen yet gets its handler made by `make` once."""

    def __init__(self, make: Callable[[type], Handler]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, kind: type) -> Handler:
        handler = self[kind] = self.make(kind)
        return handler


def generic(kind: type, handlers: Handlers) -> Handler:
    """The walk of *kind*'s fields that may hold nodes (`nothing` when it has none)."""
    fields = tuple(name for name in getattr(kind, "_fields", ()) if name not in LEAF_FIELDS)
    if kind is CONSTANT or not fields:
        return nothing

    def walk(collector: Any, node: Any, fields: tuple[str, ...] = fields) -> None:
        for name in fields:
            value = getattr(node, name, None)
            for item in value if type(value) is list else (value,):
                if isinstance(item, ast.AST) and type(item) is not CONSTANT:
                    handlers[type(item)](collector, item)

    return walk


def written_out(handlers: Handlers) -> dict[type, Handler]:
    """The walks written out for the most frequent types without a visitor. Each visits exactly
    the fields the generic walk would, in the same order, and dispatches every child from its
    own frame as the generic walk does (no helper call between): a frame more per level would
    make the collector hit the recursion limit sooner on deeply nested code (a generated sum of
    hundreds of terms is a chain of `BinOp`s)."""

    def value(collector: Any, node: Any) -> None:  # Expr, Return, Await, Yield(From), Starred
        child = node.value
        if child is not None and type(child) is not CONSTANT:
            handlers[type(child)](collector, child)

    def pair(first: str, second: str) -> Handler:
        def walk(collector: Any, node: Any) -> None:
            child = getattr(node, first)
            if child is not None and type(child) is not CONSTANT:
                handlers[type(child)](collector, child)
            child = getattr(node, second)
            if child is not None and type(child) is not CONSTANT:
                handlers[type(child)](collector, child)

        return walk

    def subscript(collector: Any, node: ast.Subscript) -> None:  # the most frequent pair
        child = node.value
        if type(child) is not CONSTANT:
            handlers[type(child)](collector, child)
        child = node.slice
        if type(child) is not CONSTANT:
            handlers[type(child)](collector, child)

    def unary(collector: Any, node: ast.UnaryOp) -> None:
        child = node.operand
        if type(child) is not CONSTANT:
            handlers[type(child)](collector, child)

    def listed(field: str) -> Handler:
        def walk(collector: Any, node: Any) -> None:
            for child in getattr(node, field):
                if type(child) is not CONSTANT:
                    handlers[type(child)](collector, child)

        return walk

    def compare(collector: Any, node: ast.Compare) -> None:
        child = node.left
        if type(child) is not CONSTANT:
            handlers[type(child)](collector, child)
        for child in node.comparators:
            if type(child) is not CONSTANT:
                handlers[type(child)](collector, child)

    def dict_(collector: Any, node: ast.Dict) -> None:
        for children in (node.keys, node.values):
            for child in children:  # a key is None for a `**` entry (`nothing` handles it)
                if type(child) is not CONSTANT:
                    handlers[type(child)](collector, child)

    def try_(collector: Any, node: ast.Try) -> None:
        for children in (node.body, node.handlers, node.orelse, node.finalbody):
            for child in children:
                handlers[type(child)](collector, child)

    return {
        **dict.fromkeys(
            (ast.Expr, ast.Return, ast.Await, ast.Yield, ast.YieldFrom, ast.Starred), value
        ),
        ast.Subscript: subscript,
        ast.Compare: compare,
        ast.BinOp: pair("left", "right"),
        ast.UnaryOp: unary,
        **dict.fromkeys((ast.List, ast.Tuple, ast.Set), listed("elts")),
        **dict.fromkeys((ast.BoolOp, ast.JoinedStr), listed("values")),
        ast.Dict: dict_,
        ast.FormattedValue: pair("value", "format_spec"),
        ast.Assert: pair("test", "msg"),
        ast.Raise: pair("exc", "cause"),
        ast.AugAssign: pair("target", "value"),
        ast.Try: try_,
    }
