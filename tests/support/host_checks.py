"""Invariants every outer result must satisfy, checked on each one the conformance tests receive.

Schema validation runs whenever the ASP definition bundle is present (CI always has it); the
behavioural invariants (pass projection, coverage bookkeeping, receipt mirroring, digests) always run.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from asp_protocol.canonical import canonical_json, changeset_digest, request_digest
from asp_protocol.vocabulary import DENY_REASONS
from asp_protocol.vocabulary import HEALTH_REASONS as PROVIDER_HEALTH_REASONS
from tests.support.definitions import assert_valid, definition_dir, require_definitions
from tests.support.host_scenarios import REQ

EVALUATE_REF = "outer-host.schema.json#/$defs/evaluateChangesetResult"
VERDICT_REF = "verdict.schema.json"
STATUS_REF = "outer-host.schema.json#/$defs/statusResult"
CAPABILITIES_REF = "outer-host.schema.json#/$defs/capabilitiesResult"
AUTHORITY_REF = "outer-host.schema.json#/$defs/authorityStatusResult"
ASSESSMENT_REF = "check-assessment.schema.json"

# A health failure may be reported as the failure itself or as what it led to.
HEALTH_REASONS = PROVIDER_HEALTH_REASONS | {"error", "unavailable", "fail-open"}
OVERCLAIMED_MODES = frozenset({"mediated-write", "isolated"})


def validate(instance: Any, ref: str) -> None:
    if definition_dir() is not None:
        assert_valid(instance, ref)


def _sorted_canon(items: list[Any]) -> list[str]:
    return sorted(canonical_json(item) for item in items)


def reasons(result: dict[str, Any]) -> set[str]:
    return {entry["reason"] for entry in result["coverage"]["degraded"]}


def find_degraded(
    result: dict[str, Any], reason: str, who: set[str] | None = None
) -> list[dict[str, Any]]:
    """Degraded entries with *reason* naming one of *who* as `requirement` or `source`."""
    return [
        entry
        for entry in result["coverage"]["degraded"]
        if entry["reason"] == reason
        and (who is None or entry.get("requirement") in who or entry["source"] in who)
    ]


def assert_degraded(
    result: dict[str, Any], reason: str, who: set[str] | None = None
) -> dict[str, Any]:
    """The first matching degraded entry; fails with the whole coverage when there is none."""
    found = find_degraded(result, reason, who)
    assert found, f"no degraded {reason!r} for {who}: {result['coverage']}"
    assert found[0]["detail"], "a degraded entry must say why"
    return found[0]


LIFECYCLE_REASONS = frozenset({"crashed", "timed-out", "quarantined", "skewed", "unavailable"})


def assert_named(
    result: dict[str, Any], reason: str, provider: str, requirement: str
) -> dict[str, Any]:
    """A degraded entry for exactly this provider (`source`) and requirement, with lifecycle info."""
    found = [
        entry
        for entry in result["coverage"]["degraded"]
        if entry["reason"] == reason
        and entry["source"] == provider
        and entry.get("requirement") == requirement
    ]
    assert found, f"no degraded {reason!r} from {provider} for {requirement}: {result['coverage']}"
    entry = found[0]
    assert entry["detail"]
    if reason in LIFECYCLE_REASONS:
        assert entry.get("capability") == "check", entry
        assert entry.get("providerState"), f"lifecycle degradation without providerState: {entry}"
    return entry


def mentions(entries: list[str], req: str) -> bool:
    """Coverage lists name requirements either bare or as `<provider>/<requirement>`."""
    return any(entry == req or entry.endswith("/" + req) for entry in entries)


def check_receipt(receipt: dict[str, Any], kind: str) -> None:
    assert receipt["kind"] == kind, receipt["kind"]
    assert receipt["privateOnly"] is True and receipt["experimental"] is True
    assert receipt["trustArtifact"] is False
    assert _sorted_canon(receipt["failures"]) == _sorted_canon(receipt["coverage"]["degraded"]), (
        "receipt failures must mirror degraded coverage"
    )
    assert receipt["coverage"]["enrolled"] == receipt["coverage"]["required"]
    assert receipt["assurance"]["mode"] not in OVERCLAIMED_MODES
    assert receipt["timing"]["elapsedMs"] >= 0


def check_envelope(
    result: dict[str, Any],
    *,
    call_site: str,
    params: dict[str, Any] | None = None,
    method: str = "host/evaluateChangeset",
) -> None:
    """Every invariant of a host Decision envelope that holds regardless of the case."""
    validate(result, EVALUATE_REF)
    validate(result, VERDICT_REF)
    decision = result["decision"]
    assert result["pass"] is (decision == "allow")
    assert result["callSite"] == call_site
    coverage = result["coverage"]
    assert coverage["enrolled"] == coverage["required"], "enrolled must equal required"
    for req in coverage["required"]:
        named = {e.get("requirement") for e in coverage["degraded"]} | {
            e["source"] for e in coverage["degraded"]
        }
        assert req in coverage["ran"] or req in named or mentions(list(filter(None, named)), req), (
            f"required {req} neither ran nor degraded: {coverage}"
        )
    if coverage["degraded"]:
        assert coverage["exhaustive"] is False, "degraded coverage cannot be exhaustive"
    receipt = result["receipt"]
    check_receipt(receipt, "evaluate")
    assert receipt["capabilityFamily"] == "check"
    assert receipt["coverage"] == coverage
    assert receipt["policyDigest"] == result["policyDigest"]
    assert receipt["requestDigest"] == result["requestDigest"]
    assert receipt.get("callSite", call_site) == call_site
    assert receipt["validAsOf"] == result["validAsOf"]
    assert _sorted_canon(receipt["authorityEvidence"]) == _sorted_canon(result["authorityEvidence"])
    assert receipt["assurance"] == result["assurance"]
    assert result["assurance"]["mode"] in ("advisory", "gated")
    assert result["assurance"]["transactionGuarantee"] == "none"
    if params is not None:
        assert result["requestDigest"] == request_digest(method, params)
        changeset = params.get("changeset")
        if isinstance(changeset, dict) and "changesetDigest" in result:
            assert result["changesetDigest"] == changeset_digest(changeset)
            assert (
                receipt.get("changesetDigest", result["changesetDigest"])
                == result["changesetDigest"]
            )
    gating = [f for f in result["findings"] if f["disposition"] == "gating"]
    for finding in gating:
        assert finding["nextStep"], "a gating finding needs a next step"
    found = reasons(result)
    if decision == "allow":
        assert not gating
        assert found <= {"optional-degraded"}, f"allow with degraded required coverage: {found}"
        for req in coverage["required"]:
            assert req in coverage["ran"]
    if decision == "deny":
        assert found & DENY_REASONS, f"deny needs a deny reason: {found}"
    if found & DENY_REASONS:
        assert decision != "allow"


def check_status(result: dict[str, Any]) -> None:
    validate(result, STATUS_REF)
    check_receipt(result["receipt"], "status")
    assert result["host"]["state"] in ("ready", "degraded", "unavailable")
    assert result["policy"]["policyDigest"] == result["receipt"]["policyDigest"]
    assert not set(result["assuranceCapabilities"]) & OVERCLAIMED_MODES


def check_capabilities(result: dict[str, Any]) -> None:
    validate(result, CAPABILITIES_REF)
    check_receipt(result["receipt"], "capabilities")
    assert result["coverage"]["enrolled"] == result["coverage"]["required"]


def check_authority_status(result: dict[str, Any]) -> None:
    validate(result, AUTHORITY_REF)
    check_receipt(result["receipt"], "authority-status")
    assert result["policyDigest"] == result["receipt"]["policyDigest"]


def server(result: dict[str, Any], provider_id: str, key: str = "servers") -> dict[str, Any]:
    """The serverStatus entry of *provider_id* in a status/capabilities/authority result."""
    for entry in result[key]:
        if entry["id"] == provider_id:
            return entry
    raise AssertionError(f"{provider_id} not listed in {key}: {[e['id'] for e in result[key]]}")


def provenance_ids(result: dict[str, Any]) -> set[str]:
    return {p["provider"] for p in result["receipt"]["providerProvenance"]}


def granted_for(result: dict[str, Any], requirement: str) -> list[dict[str, Any]]:
    return [
        e
        for e in result["authorityEvidence"]
        if e["authority"]["granted"] and e["authority"]["requirement"] in (requirement,)
    ]


def requirement_ids(prefix: str) -> list[str]:
    """The `<prefix>-*` requirement ids listed in the bundle's CONFORMANCE.md digest (or [])."""
    bundle = definition_dir()
    document = bundle / "CONFORMANCE.md" if bundle is not None else None
    if document is None or not document.is_file():
        return []
    pattern = re.compile(rf"^\| ({prefix}-[A-Z0-9-]+) \|", re.MULTILINE)
    return sorted(set(pattern.findall(document.read_text(encoding="utf-8"))))


def named_test_for(requirement_id: str) -> str:
    """`CORE-HOST-STATUS` -> `test_core_host_status`: the one test named for each id."""
    return "test_" + requirement_id.lower().replace("-", "_")


def assert_each_id_has_a_test(
    prefix: str,
    expected: int,
    suite: Mapping[str, Any],
    *,
    left_out: Collection[str] = (),
    other_suites: tuple[str, ...] = (),
) -> None:
    """Every `<prefix>-*` id of CONFORMANCE.md (there are *expected*; ids starting with one of
    *other_suites* belong to another suite) has a test named for it in *suite* (a module's
    globals) or a stated reason in *left_out*. One check, so that no suite can quietly skip an id."""
    require_definitions()
    ids = [i for i in requirement_ids(prefix) if not i.startswith(other_suites)]
    assert len(ids) == expected, ids
    missing = [i for i in ids if named_test_for(i) not in suite and i not in left_out]
    assert not missing, f"no test for {missing}"


def who(provider: str) -> set[str]:
    """The provider ids a receipt names for the one-requirement scenarios: the requirement and it."""
    return {REQ, provider}


def named(result: dict[str, Any], reason: str, provider: str) -> dict[str, Any]:
    """The degraded entry naming *provider* as source and `fake-check` as requirement."""
    return assert_named(result, reason, provider, REQ)
