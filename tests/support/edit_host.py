"""Edit/apply scenarios and self-checking outer calls for the EDIT-HOST and ASSURANCE suites.

A scenario pins the scripted fake edit provider (`reference_host.providers.fake_edit`, launched
from a trusted manifest like every fake) to the edit requirement `fake-edit-req`, beside the
check requirement `fake-check` that the gate uses to judge a plan's after-state. Every plan and
apply result is validated against the official schemas and the receipt invariants; the work tree
is compared byte for byte after every call — a plan never writes, a refused apply never writes,
and only a successful apply's changes are accepted as the new expected tree.
"""

from __future__ import annotations

from typing import Any

from tests.support.host_checks import check_envelope, check_receipt, validate
from tests.support.host_pool import HostUnderTest
from tests.support.host_scenarios import CALL_SITES, REQ, Fake, HostConfig, Req

EDIT_MODULE = "reference_host.providers.fake_edit"
EDIT_REQ = "fake-edit-req"
PLAN_REF = "outer-host.schema.json#/$defs/requestEditPlanResult"
APPLY_REF = "outer-host.schema.json#/$defs/applyProposalResult"
EDIT_PLAN_REF = "edit-plan.schema.json"
SEEN_ASSURANCE: list[dict[str, Any]] = []  # every assurance block an edit result reported


def edit_fake(behavior: str, **kw: Any) -> Fake:
    return Fake(behavior, id=f"edit-{behavior}", module=EDIT_MODULE, capabilities=("edit",), **kw)


def edit_config(
    behavior: str = "plan",
    *,
    check: str = "clean",
    edit_assurance: tuple[str, ...] = ("advisory", "gated"),
    host_assurance: str | None = None,
    pin: tuple[tuple[str, str], ...] = (),
    pinned: bool = True,
    **fake: Any,
) -> HostConfig:
    """`fake-check` (behaviour *check*) required everywhere; the edit fake pinned or unpinned."""
    edit = edit_fake(behavior, **fake)
    requirements = [Req(REQ, (Fake(check),))]
    if pinned:
        requirements.append(
            Req(EDIT_REQ, (edit,), assurance=edit_assurance, pin=pin, capabilities=("edit",))
        )
    return HostConfig(
        requirements=tuple(requirements),
        required=tuple((site, (REQ,)) for site in CALL_SITES),
        assurance=host_assurance,
        unpinned=() if pinned else (edit,),
    )


def request_plan(
    hut: HostUnderTest,
    args: dict[str, Any] | None = None,
    *,
    scope: list[str] | None = None,
    call_site: str = "interactive",
    operation: str = "text-edit",
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "callSite": call_site,
        "operation": operation,
        "baseline": hut.baseline(),
        "args": args if args is not None else {"path": "src/app.py"},
    }
    if scope is not None:
        params["scope"] = {"paths": scope}
    result = hut.call("host/requestEditPlan", params, timeout=40)
    validate(result, PLAN_REF)
    validate(result["proposal"], EDIT_PLAN_REF)
    receipt = result["receipt"]
    check_receipt(receipt, "edit-request")
    assert receipt["capabilityFamily"] == "edit"
    assert receipt["proposalId"] == result["proposal"]["proposalId"]
    SEEN_ASSURANCE.append(receipt["assurance"])
    hut.verify_tree()
    return result


def apply(
    hut: HostUnderTest, proposal_id: str, *, call_site: str = "interactive", **extra: Any
) -> dict[str, Any]:
    params = {"callSite": call_site, "proposalId": proposal_id, "intent": "agent", **extra}
    result = hut.call("host/applyProposal", params, timeout=60)
    validate(result, APPLY_REF)
    receipt = result["receipt"]
    check_receipt(receipt, "apply-attempt")
    assert receipt["capabilityFamily"] == "edit" and receipt["proposalId"] == proposal_id
    assert result["assurance"]["mode"] in ("advisory", "gated")
    assert result["assurance"]["transactionGuarantee"] == "none"
    assert receipt["assurance"] == result["assurance"]
    SEEN_ASSURANCE.extend([result["assurance"], receipt["assurance"]])
    if "decision" in result:
        check_envelope(result["decision"], call_site="gate")
        SEEN_ASSURANCE.append(result["decision"]["assurance"])
    if result["applied"]:
        assert result["baselineAfter"] is not None and "refusal" not in result
        assert result["baselineAfter"] != result["baselineBefore"]
        assert result["decision"]["decision"] == "allow"
        assert receipt["coverage"]["degraded"] == []
        hut.expect_current_tree()
    else:
        assert result["baselineAfter"] is None and result["refusal"]["detail"]
        assert receipt["coverage"]["degraded"], "a refused apply must say why in its receipt"
        hut.verify_tree()
    return result


def refused(result: dict[str, Any], reason: str) -> dict[str, Any]:
    assert result["applied"] is False, result
    assert result["refusal"]["reason"] == reason, result["refusal"]
    return result["refusal"]


def rejected_plan(result: dict[str, Any], reason: str) -> dict[str, Any]:
    """The host refused the provider's plan: a never-cached error plan and a degraded receipt."""
    proposal = result["proposal"]
    assert proposal["status"] == "error", proposal["status"]
    assert proposal["refusal"]["reason"] == "provider-error"
    assert "workspaceEdit" not in proposal
    coverage = result["receipt"]["coverage"]
    assert coverage["ran"] == [] and coverage["exhaustive"] is False
    found = [d for d in coverage["degraded"] if d["reason"] == reason]
    assert found, coverage["degraded"]
    assert found[0]["capability"] == "edit"
    return found[0]
