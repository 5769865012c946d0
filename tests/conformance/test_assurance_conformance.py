"""ASSURANCE-* conformance (CONFORMANCE.md §6): the apply path reports what it achieves, never more.

The reference host writes the real work tree itself, one atomic file replacement at a time: it
can be `advisory` or (launched as the gate boundary) `gated`, never `mediated-write` or
`isolated`, and its transaction guarantee is `none`. These tests drive the real host process
through host/requestEditPlan and host/applyProposal with the scripted fake edit provider.
"""

from __future__ import annotations

import pytest

from tests.support.edit_host import (
    SEEN_ASSURANCE,
    apply,
    edit_config,
    refused,
    rejected_plan,
    request_plan,
)
from tests.support.host_checks import assert_each_id_has_a_test
from tests.support.host_pool import HostPool

APP = "def add(a, b):\n    return a + b\n"
OVERCLAIMS = {"mediated-write", "isolated"}


def test_assurance_advisory_reporting(pool: HostPool) -> None:
    hut = pool.get(edit_config(edit_assurance=("gated",)))
    plan = request_plan(hut)
    assert plan["receipt"]["assurance"]["mode"] == "advisory"
    result = apply(hut, plan["proposal"]["proposalId"])
    refused(result, "insufficient-assurance")
    assert result["assurance"]["mode"] == "advisory"
    assert result["assurance"]["transactionGuarantee"] == "none"
    assert "decision" not in result, "no gate decision is implied by an advisory refusal"
    assert (hut.repo / "src/app.py").read_text() == APP


def test_assurance_gated_boundary(pool: HostPool) -> None:
    hut = pool.get(edit_config(host_assurance="gated"), fresh=True)
    plan = request_plan(hut)
    result = apply(hut, plan["proposal"]["proposalId"])
    assert result["applied"] is True
    assert result["assurance"]["mode"] == "gated"
    assert result["assurance"]["transactionGuarantee"] == "none"
    detail = result["assurance"]["detail"]
    assert "gate-validation" in detail and "interactive-apply" in detail
    assert result["decision"]["callSite"] == "gate"
    assert result["receipt"]["callSite"] == "interactive"


def test_assurance_mediated_write_downgrade(pool: HostPool) -> None:
    _refuses_unenforceable(pool, "mediated-write")


def test_assurance_isolated_downgrade(pool: HostPool) -> None:
    _refuses_unenforceable(pool, "isolated")


def _refuses_unenforceable(pool: HostPool, mode: str) -> None:
    """A requirement asking only for an unenforceable mode is refused, never upgraded to it."""
    for host_mode in (None, "gated"):
        hut = pool.get(edit_config(edit_assurance=(mode,), host_assurance=host_mode))
        plan = request_plan(hut)
        result = apply(hut, plan["proposal"]["proposalId"])
        detail = refused(result, "insufficient-assurance")["detail"]
        assert "cannot enforce mediated-write or isolated" in detail
        assert result["assurance"]["mode"] == (host_mode or "advisory")
        assert not OVERCLAIMS & set(hut.status()["assuranceCapabilities"])
        assert (hut.repo / "src/app.py").read_text() == APP


def test_assurance_direct_write_refusal(pool: HostPool) -> None:
    for config in (
        edit_config("direct-write"),
        edit_config("requests-write"),
        edit_config("plan", write_paths=("workspace:**",)),
    ):
        hut = pool.get(config)
        plan = request_plan(hut)
        rejected_plan(plan, "direct-write-risk")
        assert plan["receipt"]["assurance"]["mode"] not in OVERCLAIMS
        result = apply(hut, plan["proposal"]["proposalId"])
        assert result["applied"] is False
        assert result["assurance"]["mode"] not in OVERCLAIMS


def test_assurance_failed_apply_no_successful_receipt(pool: HostPool) -> None:
    outcomes = []
    for behavior, check in (
        ("crash", "clean"),
        ("command-like", "clean"),
        ("plan", "finding"),
        ("plan", "incomplete"),
    ):
        hut = pool.get(edit_config(behavior, check=check), fresh=behavior == "crash")
        plan = request_plan(hut)
        result = apply(hut, plan["proposal"]["proposalId"])
        outcomes.append((behavior, check, result))
        assert result["applied"] is False and result["baselineAfter"] is None
        assert result["receipt"]["failures"], "a failed apply names its failure"
        assert result["receipt"]["coverage"]["ran"] == []
        assert (hut.repo / "src/app.py").read_text() == APP
    reasons = {(b, c): r["refusal"]["reason"] for b, c, r in outcomes}
    assert reasons[("crash", "clean")] == "precondition-failed"
    assert reasons[("plan", "finding")] == "validation-denied"
    assert reasons[("plan", "incomplete")] == "validation-indeterminate"


def test_assurance_transaction_guarantee_bound(pool: HostPool) -> None:
    hut = pool.get(edit_config(), fresh=True)
    plan = request_plan(hut)
    apply(hut, plan["proposal"]["proposalId"])
    assert SEEN_ASSURANCE, "the suite observed no assurance at all"
    for block in SEEN_ASSURANCE:
        assert block["transactionGuarantee"] == "none", block
        assert block["mode"] in ("advisory", "gated"), block


@pytest.mark.needs_definitions
def test_every_assurance_id_has_its_test() -> None:
    """Each ASSURANCE-* id of CONFORMANCE.md has a test named for it here."""
    assert_each_id_has_a_test("ASSURANCE", 7, globals())
