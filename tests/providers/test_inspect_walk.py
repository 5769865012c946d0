"""The fact collector's walks (pyindex/walk.py): the written-out walks record what the generic walk
records, in the same order, and cost no more stack, so deep code is collected as before."""

from __future__ import annotations

import ast

import pytest

from reference_host.providers.pyindex import facts
from reference_host.providers.pyindex.diskcache import encode
from reference_host.providers.pyindex.facts import parse_facts
from reference_host.providers.pyindex.walk import Handler, Handlers, generic

# every node type with a written-out walk, each holding uses in every field the walk visits
SOURCE = b"""
import os
from pkg import helper, Thing


async def run(items, key=helper.default()):
    total = items[key.start : key.stop] + helper.offset(items)
    flag = not items and (helper.check(total) or Thing.ready)
    if total < helper.low(items) <= helper.high(items) != os.sep:
        total -= helper.shrink(total)
    pairs = [helper.one(x), (helper.two(x), *items)], {helper.three(key)}
    table = {helper.key(k): helper.value(v), **helper.extra(items)}
    text = f"{helper.name(items)!r:{helper.width(total)}} and {Thing.label}"
    assert helper.valid(total), helper.message(total)
    await helper.wait(items)
    try:
        helper.step(items)
    except Thing.Error as error:
        raise Thing.Wrapped(error) from helper.cause(error)
    else:
        yield helper.later(items)
    finally:
        yield from helper.cleanup(items)
    return helper.result(total, flag, pairs, table, text), -helper.negative(total)
"""


def _generic_only() -> Handlers:
    """A handler table with the collector's visitors and the generic walk for every other type."""

    def make(kind: type) -> Handler:
        method = getattr(facts._Collector, "visit_" + kind.__name__, None)
        return method if method is not None else generic(kind, table)  # type: ignore[no-any-return]

    table = Handlers(make)
    return table


def test_written_out_walks_record_what_the_generic_walk_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tree = ast.parse(SOURCE)
    written = {type(node) for node in ast.walk(tree)} & set(facts._WRITTEN)
    assert len(written) >= 18, sorted(kind.__name__ for kind in written)
    fast = parse_facts("blob:walk", SOURCE)
    monkeypatch.setattr(facts, "_HANDLERS", _generic_only())
    slow = parse_facts("blob:walk", SOURCE)
    assert fast.error is None and len(fast.uses) > 40
    assert [use.chain for use in fast.uses] == [use.chain for use in slow.uses]
    assert encode(fast) == encode(slow)


@pytest.mark.parametrize(
    "expression",
    [
        " + ".join(["x"] * 600),  # a chain of BinOps, left-nested
        "[" * 150 + "x" + "]" * 150,  # nested lists
        "{'a': " * 150 + "x" + "}" * 150,  # nested dicts
        "x" + "[y]" * 600,  # nested subscripts
    ],
    ids=["sum", "lists", "dicts", "subscripts"],
)
def test_deeply_nested_code_is_collected_not_cut_by_the_recursion_limit(expression: str) -> None:
    """Generated code (a table of polynomials, a literal) nests hundreds deep: the walks
    dispatch children from their own frames, so such a file still yields its uses."""
    found = parse_facts("blob:deep", f"value = {expression}\n".encode())
    assert found.error is None
    assert any(use.chain[0] == "x" for use in found.uses)
