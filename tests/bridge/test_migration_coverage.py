"""Coverage map from host/capabilities + host/status results: official examples and degraded variants."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from asp_protocol.vocabulary import CAPABILITY_FAMILIES
from bridge.migration.coverage import MAX_HOST_STRING, coverage_map
from tests.support.definitions import assert_valid, load_json


def _result(name: str) -> dict[str, Any]:
    return copy.deepcopy(load_json(f"examples/core/{name}")["result"])


def _state(
    provider: str, capability: str, lifecycle: str, *, available: bool = True, degraded: Any = ()
) -> dict[str, Any]:
    return {
        "provider": provider,
        "role": "required",
        "capability": capability,
        "advertised": True,
        "available": available,
        "lifecycleState": lifecycle,
        "degraded": list(degraded),
    }


def _with_states(result: dict[str, Any], check_state: dict[str, Any]) -> dict[str, Any]:
    """The example plus the `capabilityStates` its schema requires (the official example omits them)."""
    for family in CAPABILITY_FAMILIES:
        result["capabilities"][family]["capabilityStates"] = (
            [check_state] if family == "check" else []
        )
    for source in result["sources"]:
        source["lifecycleState"] = check_state["lifecycleState"]
        source["capabilityStates"] = {
            family: {
                "capability": family,
                "advertised": family == "check",
                "available": family == "check" and check_state["available"],
                "lifecycleState": check_state["lifecycleState"],
                "degraded": [],
            }
            for family in CAPABILITY_FAMILIES
        }
    return result


def _by_name(items: Any) -> dict[str, Any]:
    return {i.name: i for i in items}


@pytest.mark.needs_definitions
def test_official_check_only_host() -> None:
    caps, status = _result("capabilities.check-only.json"), _result("status.ready.json")
    items = _by_name(
        coverage_map(
            ["judge", "rox", "sense", "act", "crg", "cix"], capabilities=caps, status=status
        )
    )
    judge = items["judge"]
    assert judge.status == "served" and judge.family_available is True
    assert [p.id for p in judge.providers] == ["core-check-provider"] and judge.providers[0].serves
    assert judge.providers[0].enrollment_state == "enrolled" and judge.providers[0].state == "ready"
    assert judge.required_at == ("gate",) and judge.gate_requires
    assert judge.legacy_aliases_advertised == ("judge",) and judge.legacy_alias_advertised is True
    assert "host/evaluateChangeset" in judge.reason
    assert items["rox"].status == "served"
    for name in ("sense", "act", "crg", "cix"):
        assert items[name].status == "not-served", name
        assert "unavailable" in items[name].reason
        assert items[name].providers == () and not items[name].gate_requires


@pytest.mark.needs_definitions
def test_schema_valid_healthy_host_is_served_with_lifecycle() -> None:
    caps = _with_states(
        _result("capabilities.check-only.json"),
        _state("core-check-provider", "check", "initialized"),
    )
    assert_valid(caps, "outer-host.schema.json#/$defs/capabilitiesResult")
    item = coverage_map(["judge/evaluate"], capabilities=caps, status=None)[0]
    assert item.status == "served" and item.lifecycle_states == ("initialized",)
    assert item.providers[0].role == "required" and item.providers[0].advertised is True


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (
            lambda c: c["capabilities"]["check"]["degraded"].append(
                {
                    "source": "core-check-provider",
                    "reason": "timed-out",
                    "detail": "slow",
                    "capability": "check",
                }
            ),
            "timed-out (core-check-provider)",
        ),
        (
            lambda c: c["capabilities"]["check"]["capabilityStates"][0].update(
                lifecycleState="crashed"
            ),
            "provider core-check-provider degraded or unavailable",
        ),
        (
            lambda c: c["capabilities"]["check"]["capabilityStates"][0]["degraded"].append(
                {"source": "core-check-provider", "reason": "optional-degraded", "detail": "x"}
            ),
            "provider core-check-provider degraded or unavailable",
        ),
        (
            lambda c: c["capabilities"]["check"]["capabilityStates"].append(
                _state("second-check", "check", "quarantined", available=False)
            ),
            "provider second-check degraded or unavailable",
        ),
    ],
)
@pytest.mark.needs_definitions
def test_degraded_answers_are_served_degraded(mutate: Any, needle: str) -> None:
    caps = _with_states(
        _result("capabilities.check-only.json"), _state("core-check-provider", "check", "active")
    )
    mutate(caps)
    assert_valid(caps, "outer-host.schema.json#/$defs/capabilitiesResult")
    item = coverage_map(["judge"], capabilities=caps, status=None)[0]
    assert item.status == "served-degraded" and needle in item.reason


@pytest.mark.needs_definitions
def test_gate_degradation_and_requirement_come_from_status() -> None:
    status = _result("status.ready.json")
    status["gates"]["gate"]["degraded"].append(
        {
            "source": "core-check-provider",
            "reason": "missing-authority",
            "detail": "pin mismatch",
            "capability": "check",
        }
    )
    status["gates"]["sweep"]["requiredCapabilities"] = ["check"]
    item = coverage_map(["judge"], capabilities=None, status=status)[0]
    assert item.status == "served-degraded"
    assert [(d.where, d.reason) for d in item.degraded] == [("gates.gate", "missing-authority")]
    assert item.required_at == ("gate", "sweep")


@pytest.mark.needs_definitions
def test_family_unavailable_with_a_provider_listed_is_not_served_but_shows_it() -> None:
    caps = _with_states(
        _result("capabilities.check-only.json"),
        _state("core-check-provider", "check", "crashed", available=False),
    )
    caps["capabilities"]["check"]["available"] = False
    item = coverage_map(["rox"], capabilities=caps, status=None)[0]
    assert item.status == "not-served" and item.lifecycle_states == ("crashed",)
    assert item.providers[0].serves is False


@pytest.mark.needs_definitions
def test_available_without_any_provider_is_not_plainly_served() -> None:
    caps = _with_states(_result("capabilities.check-only.json"), _state("x", "check", "active"))
    caps["capabilities"]["check"].update(providers=[], capabilityStates=[])
    caps["sources"] = []
    item = coverage_map(["judge"], capabilities=caps, status=None)[0]
    assert item.status == "served-degraded" and "names no serving provider" in item.reason


@pytest.mark.needs_definitions
def test_names_without_an_outer_method_and_unknown_names() -> None:
    caps = _result("capabilities.check-only.json")
    items = _by_name(
        coverage_map(
            ["judge/publishDiagnostics", "crg:wal", "nope", "sense/frobnicate"],
            capabilities=caps,
            status=None,
        )
    )
    assert items["judge/publishDiagnostics"].status == "not-served"
    assert "no host outer-seam method" in items["judge/publishDiagnostics"].reason
    assert items["crg:wal"].status == "not-served"
    assert (
        items["nope"].status == "unknown-legacy-name"
        and items["sense/frobnicate"].status == "unknown-legacy-name"
    )


@pytest.mark.needs_definitions
def test_verb_level_rows_say_they_are_family_answers() -> None:
    caps = _result("capabilities.check-only.json")
    caps["capabilities"]["inspect"].update(available=True, providers=["asp-python-inspect"])
    item = coverage_map(["sense/impact"], capabilities=caps, status=None)[0]
    assert item.status == "served" and any("not verbs" in n for n in item.notes)


@pytest.mark.needs_definitions
def test_legacy_roles_projection_counts_as_advertised() -> None:
    caps = _result("capabilities.check-only.json")
    for family in CAPABILITY_FAMILIES:
        caps["capabilities"][family].pop("legacyAliases")
    item = coverage_map(["judge"], capabilities=caps, status=None)[0]
    assert item.legacy_aliases_advertised == ("judge",)
    caps.pop("legacyRoles")
    assert (
        coverage_map(["judge"], capabilities=caps, status=None)[0].legacy_alias_advertised is False
    )


@pytest.mark.parametrize(
    "junk",
    [
        None,
        {},
        {"capabilities": []},
        {"capabilities": {"check": "yes"}},
        {
            "capabilities": {
                "check": {"available": "true", "providers": "p", "capabilityStates": [1, None]}
            }
        },
        {
            "capabilities": {"check": {"available": True, "providers": [5]}},
            "sources": [{"id": 3}, "x"],
        },
    ],
)
def test_hostile_host_results_do_not_break_the_map(junk: Any) -> None:
    item = coverage_map(["judge"], capabilities=junk, status=junk)[0]
    assert item.status in ("not-served", "served-degraded")


@pytest.mark.needs_definitions
def test_host_strings_are_capped() -> None:
    caps = _with_states(
        _result("capabilities.check-only.json"), _state("p" * 5000, "check", "active")
    )
    caps["capabilities"]["check"]["degraded"].append(
        {"source": "s", "reason": "error", "detail": "d" * 5000}
    )
    item = coverage_map(["judge"], capabilities=caps, status=None)[0]
    assert all(len(p.id) <= MAX_HOST_STRING + 1 for p in item.providers)
    assert all(len(d.detail) <= MAX_HOST_STRING + 1 for d in item.degraded)
