"""Every legacy name the protocol defines maps to its canonical family, verb and outer-seam method."""

from __future__ import annotations

import pytest

from asp_protocol.vocabulary import LEGACY_ROLE
from bridge.migration.legacy_names import (
    CANONICAL_NAMES,
    LEGACY_NAMES,
    NAME_TABLE,
    map_name,
    map_names,
)

# (name, kind, family, verb, canonical, outer method) — the ASP definition's legacy names (docs/architecture.md#protocol-map).
PROTOCOL_LEGACY = [
    ("sense", "legacy-role", "inspect", None, "inspect", "host/queryInspect"),
    ("judge", "legacy-role", "check", None, "check", "host/evaluateChangeset"),
    ("act", "legacy-role", "edit", None, "edit", "host/requestEditPlan"),
    (
        "sense/references",
        "legacy-method",
        "inspect",
        "references",
        "inspect/references",
        "host/queryInspect",
    ),
    (
        "sense/callers",
        "legacy-method",
        "inspect",
        "callers",
        "inspect/callers",
        "host/queryInspect",
    ),
    (
        "sense/callees",
        "legacy-method",
        "inspect",
        "callees",
        "inspect/callees",
        "host/queryInspect",
    ),
    (
        "sense/symbols",
        "legacy-method",
        "inspect",
        "symbols",
        "inspect/symbols",
        "host/queryInspect",
    ),
    ("sense/impact", "legacy-method", "inspect", "impact", "inspect/impact", "host/queryInspect"),
    ("sense/query", "legacy-method", "inspect", "query", "inspect/query", "host/queryInspect"),
    (
        "judge/evaluate",
        "legacy-method",
        "check",
        "evaluate",
        "check/evaluate",
        "host/evaluateChangeset",
    ),
    (
        "judge/publishDiagnostics",
        "legacy-method",
        "check",
        "publishDiagnostics",
        "check/publishDiagnostics",
        None,
    ),
    ("act/propose", "legacy-method", "edit", "propose", "edit/propose", "host/requestEditPlan"),
    ("crg", "legacy-tool", "inspect", None, "inspect", "host/queryInspect"),
    ("rox", "legacy-tool", "check", None, "check", "host/evaluateChangeset"),
    ("cix", "legacy-tool", "edit", None, "edit", "host/requestEditPlan"),
]


@pytest.mark.parametrize(("name", "kind", "family", "verb", "canonical", "outer"), PROTOCOL_LEGACY)
def test_protocol_legacy_name_maps(
    name: str, kind: str, family: str, verb: str | None, canonical: str, outer: str | None
) -> None:
    m = map_name(name)
    assert m.known and m.name == name and m.requested == name
    assert (m.kind, m.family, m.verb, m.canonical, m.outer_method) == (
        kind,
        family,
        verb,
        canonical,
        outer,
    )
    assert m.legacy_alias == LEGACY_ROLE[family]
    assert m.note  # every entry says why it maps the way it does


def test_the_table_holds_exactly_the_protocol_names_plus_documented_tool_surfaces() -> None:
    protocol = {row[0] for row in PROTOCOL_LEGACY}
    surfaces = {n for n in LEGACY_NAMES if NAME_TABLE[n].kind == "legacy-tool-surface"}
    assert set(LEGACY_NAMES) == protocol | surfaces
    for tool in ("crg", "rox", "cix"):
        listed = set(NAME_TABLE[tool].surfaces)
        assert listed == {s for s in surfaces if s.startswith(tool + ":")}
        assert listed, f"{tool} has documented surfaces"


# The §13 surfaces: crg search/impact/watch/WAL/hot-query, rox TypeScript/Rust/custom-extension/daemon/cache,
# cix exact/multi/search-replace/patch/tree/rename/move/signature/validation-before-write + symbol routes.
SURFACES = [
    ("crg:search", "inspect", "symbols", None, "host/queryInspect"),
    ("crg:impact", "inspect", "impact", None, "host/queryInspect"),
    ("crg:watch", "inspect", "watch", None, None),
    ("crg:wal", "inspect", None, None, None),
    ("crg:hot-query", "inspect", "query", None, "host/queryInspect"),
    ("rox:typescript", "check", "evaluate", None, "host/evaluateChangeset"),
    ("rox:rust", "check", "evaluate", None, "host/evaluateChangeset"),
    ("rox:custom-extension", "check", "evaluate", None, "host/evaluateChangeset"),
    ("rox:daemon", "check", "evaluate", None, "host/evaluateChangeset"),
    ("rox:cache", "check", "evaluate", None, "host/evaluateChangeset"),
    ("cix:exact", "edit", "propose", "text-edit", "host/requestEditPlan"),
    ("cix:multi", "edit", "propose", "multi-edit", "host/requestEditPlan"),
    ("cix:search-replace", "edit", "propose", "text-edit", "host/requestEditPlan"),
    ("cix:patch", "edit", "propose", "text-edit", "host/requestEditPlan"),
    ("cix:tree", "edit", "propose", "replace-resource", "host/requestEditPlan"),
    ("cix:rename", "edit", "propose", "rename", "host/requestEditPlan"),
    ("cix:move", "edit", "propose", "move", "host/requestEditPlan"),
    ("cix:signature", "edit", "propose", "change-signature", "host/requestEditPlan"),
    ("cix:validation-before-write", "check", "evaluate", None, "host/evaluateChangeset"),
    ("cix:symbol-routes", "inspect", "symbols", None, "host/queryInspect"),
]


@pytest.mark.parametrize(("name", "family", "verb", "operation", "outer"), SURFACES)
def test_tool_surface_maps_and_is_marked_inferred(
    name: str, family: str, verb: str | None, operation: str | None, outer: str | None
) -> None:
    m = map_name(name)
    assert m.kind == "legacy-tool-surface" and m.inferred
    assert (m.family, m.verb, m.operation, m.outer_method) == (family, verb, operation, outer)
    assert m.tool == name.split(":")[0]


def test_every_surface_in_the_table_is_covered_by_the_test_list() -> None:
    assert {n for n in LEGACY_NAMES if ":" in n} == {row[0] for row in SURFACES}


@pytest.mark.parametrize(
    ("name", "family", "verb", "kind"),
    [
        ("inspect", "inspect", None, "canonical-family"),
        ("check", "check", None, "canonical-family"),
        ("edit", "edit", None, "canonical-family"),
        ("check/evaluate", "check", "evaluate", "canonical-method"),
        ("edit/propose", "edit", "propose", "canonical-method"),
        ("inspect/references", "inspect", "references", "canonical-method"),
        ("host/evaluateChangeset", "check", "evaluate", "outer-method"),
        ("host/queryInspect", "inspect", "query", "outer-method"),
        ("host/requestEditPlan", "edit", "propose", "outer-method"),
    ],
)
def test_canonical_names_map_to_themselves(
    name: str, family: str, verb: str | None, kind: str
) -> None:
    m = map_name(name)
    assert (m.known, m.family, m.verb, m.kind) == (True, family, verb, kind)
    assert name in CANONICAL_NAMES


def test_no_canonical_inspect_method_string_is_claimed_to_exist() -> None:
    m = map_name("inspect/callers")
    assert m.inferred and "no canonical inspect/*" in m.note


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "lint",
        "sense/frobnicate",
        "judge/decide",
        "act/apply",
        "crg:nothing",
        "host/applyProposal",
    ],
)
def test_unknown_names_are_unknown(name: str) -> None:
    m = map_name(name)
    assert not m.known and m.kind == "unknown" and m.family is None and m.outer_method is None


def test_spelling_variants_resolve_but_keep_what_was_asked() -> None:
    for given, table in [
        ("CRG", "crg"),
        (" judge ", "judge"),
        ("crg/impact", "crg:impact"),
        ("CIX.rename", "cix:rename"),
    ]:
        m = map_name(given)
        assert (m.name, m.requested, m.known) == (table, given, True)


def test_a_huge_unknown_name_is_capped() -> None:
    m = map_name("x" * 10_000)
    assert not m.known and len(m.requested) < 300


def test_map_names_keeps_order_and_drops_exact_duplicates() -> None:
    got = map_names(["rox", "sense", "rox", "nope"])
    assert [m.requested for m in got] == ["rox", "sense", "nope"]
