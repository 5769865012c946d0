"""The Python inspect engine in-process: definitions, name resolution, calls, impact, caching, limits."""

from __future__ import annotations

from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers.pyindex import (
    ChangedFile,
    InspectEngine,
    PythonIndex,
    callees,
    callers,
    impact,
    references,
    resolve_symbol,
    symbols,
)
from reference_host.providers.pyindex.facts import parse_facts
from reference_host.providers.pyindex.modules import is_test_path, module_names
from tests.support.definitions import assert_valid
from tests.support.inspect_sample import (
    CART,
    INIT,
    MONEY,
    MONEY_ADD,
    PRICING,
    REPORT,
    ROUND_CENTS,
    SAMPLE,
    sample_bytes,
)

VALID_AS_OF = {"rev": "tree:test", "blobs": []}


@pytest.fixture(scope="module")
def index() -> PythonIndex:
    return InspectEngine().index_sources(sample_bytes())


def graph_valid(graph: dict[str, Any]) -> dict[str, Any]:
    assert_valid({**graph, "validAsOf": VALID_AS_OF}, "sense-graph.schema.json#/$defs/graphResult")
    return graph


def impact_valid(body: dict[str, Any]) -> dict[str, Any]:
    assert_valid({**body, "validAsOf": VALID_AS_OF}, "sense-graph.schema.json#/$defs/impactResult")
    return body


def edges_of(graph: dict[str, Any], kind: str | None = None) -> list[tuple[str, str]]:
    return [(e["from"], e["to"]) for e in graph["edges"] if kind is None or e["kind"] == kind]


def ids(nodes: list[dict[str, Any]]) -> list[str]:
    return [n["id"] for n in nodes]


def test_module_names_follow_packages_src_layout_and_test_dirs() -> None:
    names = module_names(
        [
            "src/shop/__init__.py",
            "src/shop/money.py",
            "tests/test_money.py",
            "tests/support/__init__.py",
            "tests/support/x.py",
            "my-tools/run.py",
        ]
    )
    assert names["src/shop/money.py"].primary == "shop.money"
    assert (
        names["src/shop/__init__.py"].primary == "shop" and names["src/shop/__init__.py"].is_package
    )
    assert names["tests/test_money.py"].primary == "test_money"
    assert "tests.test_money" in names["tests/test_money.py"].aliases
    assert names["tests/support/x.py"].primary == "support.x"
    assert names["my-tools/run.py"].primary == "run" and names["my-tools/run.py"].aliases == ()
    assert is_test_path("tests/helpers.py") and is_test_path("pkg/foo_test.py")
    assert not is_test_path("src/shop/testing_utils.py")


@pytest.mark.needs_definitions
def test_symbols_of_a_path_lists_definitions_with_zero_based_locations(index: PythonIndex) -> None:
    graph = graph_valid(symbols(index, MONEY, None, 100)[0])
    by_id = {n["id"]: n for n in graph["nodes"]}
    assert set(by_id) == {
        MONEY,
        ROUND_CENTS,
        f"{MONEY}::Money",
        f"{MONEY}::Money.__init__",
        MONEY_ADD,
    }
    assert by_id[MONEY]["kind"] == "module" and by_id[MONEY]["name"] == "shop.money"
    money = by_id[f"{MONEY}::Money"]
    assert money["kind"] == "class"
    assert money["location"]["range"]["start"] == {"line": 4, "char": 0}
    assert by_id[MONEY_ADD]["location"]["range"]["start"] == {"line": 8, "char": 4}
    assert (f"{MONEY}::Money", MONEY_ADD) in edges_of(graph, "contains")
    assert (MONEY, ROUND_CENTS) in edges_of(graph, "contains")
    assert graph["data"]["mode"] == "path" and graph["data"]["truncated"] is False


@pytest.mark.needs_definitions
def test_symbols_marks_tests_and_filters_kinds(index: PythonIndex) -> None:
    graph = graph_valid(symbols(index, "tests", ["test"], 100)[0])
    assert sorted(ids(graph["nodes"])) == [
        "tests/test_cart.py::test_sale",
        "tests/test_money.py::test_add",
        "tests/test_report.py::test_render",
    ]
    assert all(n["kind"] == "test" and n["test"] is True for n in graph["nodes"])
    by_name = graph_valid(symbols(index, "Money", None, 100)[0])
    assert ids(by_name["nodes"]) == [f"{MONEY}::Money"]
    glob = graph_valid(symbols(index, "round_*", None, 100)[0])
    assert ids(glob["nodes"]) == [ROUND_CENTS] and glob["data"]["mode"] == "glob"


@pytest.mark.needs_definitions
def test_symbols_honours_the_limit_and_says_truncated(index: PythonIndex) -> None:
    graph = graph_valid(symbols(index, "", None, 3)[0])
    assert len(graph["nodes"]) == 3
    assert graph["data"]["truncated"] is True and graph["data"]["limit"] == 3


@pytest.mark.needs_definitions
def test_references_follow_relative_aliased_and_from_imports(index: PythonIndex) -> None:
    graph, paths = references(index, {"id": ROUND_CENTS}, "workspace", 100)
    graph_valid(graph)
    found = {
        (e["from"], e["kind"], e["location"]["range"]["start"]["line"]) for e in graph["edges"]
    }
    assert found == {
        (f"{MONEY}::Money.__init__", "calls", 6),
        (PRICING, "imports", 1),
        (f"{PRICING}::total", "calls", 8),
        (f"{PRICING}::discounted", "calls", 12),  # through `from . import money as m`
    }
    assert all(e["to"] == ROUND_CENTS for e in graph["edges"])
    assert paths == {MONEY, PRICING}


@pytest.mark.needs_definitions
def test_references_through_reexports_and_dotted_module_access(index: PythonIndex) -> None:
    assert resolve_symbol(index, {"id": "shop.compute_total"}) == [f"{PRICING}::total"]
    graph = graph_valid(references(index, {"id": "shop.pricing.total"}, "workspace", 100)[0])
    sources = {(s, kind) for s, kind in ((e["from"], e["kind"]) for e in graph["edges"])}
    assert (INIT, "imports") in sources
    assert (
        f"{CART}::Cart.total",
        "calls",
    ) in sources  # `shop.pricing.total(...)` after `import shop.pricing`
    assert (f"{PRICING}::discounted", "calls") in sources
    scoped = graph_valid(
        references(index, {"id": "shop.pricing.total"}, {"paths": ["src/shop/cart.py"]}, 100)[0]
    )
    assert {e["from"] for e in scoped["edges"]} == {f"{CART}::Cart.total"}


@pytest.mark.needs_definitions
def test_symbol_refs_by_position_bare_name_and_unknown(index: PythonIndex) -> None:
    # line 8 of pricing.py is `    return round_cents(acc.amount)`
    assert resolve_symbol(index, {"path": PRICING, "position": {"line": 8, "char": 12}}) == [
        ROUND_CENTS
    ]
    assert resolve_symbol(index, {"path": PRICING, "position": {"line": 5, "char": 4}}) == [
        f"{PRICING}::total"
    ]
    assert resolve_symbol(index, {"id": "total"}) == sorted(
        [f"{PRICING}::total", f"{CART}::Cart.total", f"{CART}::GiftCart.total"]
    )
    graph = graph_valid(references(index, {"id": "no_such_thing"}, "workspace", 100)[0])
    assert graph["nodes"] == [] and graph["data"]["unresolved"] is True


@pytest.mark.needs_definitions
def test_callers_resolve_instances_self_inheritance_and_super(index: PythonIndex) -> None:
    sale = graph_valid(callers(index, {"id": f"{CART}::Cart.sale"}, 1, 100)[0])
    assert set(edges_of(sale, "calls")) == {
        (f"{CART}::GiftCart.wrap", f"{CART}::Cart.sale"),  # self.sale() inherited from Cart
        ("tests/test_cart.py::test_sale", f"{CART}::Cart.sale"),  # Cart().sale()
    }
    total = graph_valid(callers(index, {"id": f"{CART}::Cart.total"}, 1, 100)[0])
    assert edges_of(total, "calls") == [(f"{CART}::GiftCart.total", f"{CART}::Cart.total")]
    add = graph_valid(callers(index, {"id": MONEY_ADD}, 1, 100)[0])
    assert ("tests/test_money.py::test_add", MONEY_ADD) in edges_of(add, "calls")


@pytest.mark.needs_definitions
def test_callers_depth_walks_transitively_and_callees_go_down(index: PythonIndex) -> None:
    one = callers(index, {"id": ROUND_CENTS}, 1, 100)[0]
    two = graph_valid(callers(index, {"id": ROUND_CENTS}, 2, 100)[0])
    assert f"{CART}::Cart.total" not in ids(one["nodes"])
    assert f"{CART}::Cart.total" in ids(two["nodes"])  # round_cents <- total <- Cart.total
    down = graph_valid(callees(index, {"id": f"{PRICING}::discounted"}, 1, 100)[0])
    assert set(edges_of(down, "calls")) == {
        (f"{PRICING}::discounted", ROUND_CENTS),
        (f"{PRICING}::discounted", f"{PRICING}::total"),
    }


@pytest.mark.needs_definitions
def test_impact_of_a_leaf_change_reaches_its_tests_transitively(index: PythonIndex) -> None:
    body, _paths = impact(index, [ChangedFile(MONEY, "modify")], "workspace", None, 100)
    impact_valid(body)
    impacted = ids(body["impactedNodes"])
    assert PRICING in impacted and CART in impacted
    assert "tests/test_money.py" in impacted  # imports money directly
    assert "tests/test_cart.py" in impacted  # cart -> pricing -> money
    assert body["impactedFiles"][0] == MONEY
    assert ("tests/test_cart.py", CART) in edges_of(body, "imports")
    assert (MONEY, "tests/test_money.py") in edges_of(body, "tested-by")
    test_nodes = [n for n in body["impactedNodes"] if n["test"]]
    assert {n["id"] for n in test_nodes} >= {"tests/test_money.py", "tests/test_cart.py"}


@pytest.mark.needs_definitions
def test_impact_stays_narrow_for_an_unrelated_module_and_honours_depth(index: PythonIndex) -> None:
    body = impact_valid(impact(index, [ChangedFile(REPORT, "modify")], "workspace", None, 100)[0])
    assert ids(body["impactedNodes"]) == [
        "tests/test_report.py",
        "tests/test_report.py::test_render",
    ]
    shallow = impact_valid(impact(index, [ChangedFile(MONEY, "modify")], "workspace", 1, 100)[0])
    assert set(ids(shallow["impactedNodes"])) >= {PRICING, "tests/test_money.py"}
    assert "tests/test_cart.py" not in ids(shallow["impactedNodes"])
    scoped = impact_valid(
        impact(index, [ChangedFile(MONEY, "modify")], {"paths": ["tests"]}, None, 100)[0]
    )
    assert all(n["id"].startswith("tests/") for n in scoped["impactedNodes"])
    cut = impact_valid(impact(index, [ChangedFile(MONEY, "modify")], "workspace", None, 2)[0])
    assert cut["truncated"] is True and len(cut["changedNodes"]) + len(cut["impactedNodes"]) == 2


@pytest.mark.needs_definitions
def test_impact_changed_nodes_are_the_definitions_that_differ() -> None:
    before = SAMPLE[MONEY].encode()
    after = before.replace(
        b"Money(self.amount + other.amount)", b"Money(self.amount + other.amount + 0)"
    )
    after = b"# moved down a line\n" + after
    engine = InspectEngine()
    index = engine.index_sources(sample_bytes())
    change = ChangedFile(
        MONEY,
        "modify",
        before=engine.facts(blob_id(before)),
        after=parse_facts(blob_id(after), after),
    )
    body = impact_valid(impact(index, [change], "workspace", None, 100)[0])
    changed = ids(body["changedNodes"])
    assert MONEY_ADD in changed and f"{MONEY}::Money" in changed
    assert (
        ROUND_CENTS not in changed and f"{MONEY}::Money.__init__" not in changed
    )  # moved, not edited
    assert ("tests/test_money.py::test_add", MONEY_ADD) in edges_of(body, "calls")


def test_engine_parses_each_blob_once_and_reuses_unchanged_trees() -> None:
    engine = InspectEngine()
    first = engine.index_sources(sample_bytes())
    parsed = engine.stats["parsed"]
    assert parsed == sum(1 for p in SAMPLE if p.endswith(".py"))
    assert engine.index_sources(sample_bytes()) is first
    assert engine.stats["parsed"] == parsed and engine.stats["indexHits"] == 1
    changed = sample_bytes()
    changed[REPORT] += b"\n\ndef footer():\n    return render([])\n"
    second = engine.index_sources(changed)
    assert second is not first and engine.stats["parsed"] == parsed + 1
    assert f"{REPORT}::footer" in second.by_name["footer"]
    tree = {p: blob_id(d) for p, d in changed.items() if p.endswith(".py")}
    assert engine.missing(tree) == []


@pytest.mark.needs_definitions
def test_unparseable_and_hostile_content_is_reported_not_fatal() -> None:
    sources = sample_bytes()
    sources["src/shop/broken.py"] = b"def broken(:\n"
    sources["src/shop/deep.py"] = b"x = " + b"(" * 300 + b"1" + b")" * 300 + b"\n"
    sources["src/shop/nul.py"] = b"a = 1\x00\n"
    sources["src/shop/cycle_a.py"] = b"from shop.cycle_b import thing\n"
    sources["src/shop/cycle_b.py"] = b"from shop.cycle_a import thing\n"
    index = InspectEngine().index_sources(sources)
    graph = graph_valid(symbols(index, "src/shop", None, 100)[0])
    assert "src/shop/broken.py" in graph["data"]["parseErrors"]
    assert resolve_symbol(index, {"id": "shop.cycle_a.thing"}) == []
    with pytest.raises(ValueError):
        InspectEngine().add_blob(blob_id(b"one"), b"two")
