"""The deny a harness gets for calling a provider method (`check/evaluate`, `judge/evaluate`) on the
host instead of `host/evaluateChangeset` (CORE-NO-LATTICE-FAST-PATH)."""

from __future__ import annotations

from typing import Any

from asp_protocol.canonical import changeset_digest, request_digest
from asp_protocol.vocabulary import CALL_SITES, CallSite
from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.receipts import Clock, assurance_block, build_receipt


def fast_path_envelope(ctx: HostContext, method: str, params: Any) -> dict[str, Any]:
    """The deny a harness gets for calling a provider method on the host (CORE-NO-LATTICE-FAST-PATH)."""
    clock = Clock()
    state = ctx.workspace.state()
    policy = ctx.policy_for(state)
    site = params.get("callSite") if isinstance(params, dict) else None
    call_site: CallSite = site if site in CALL_SITES else "gate"
    required = policy.required_ids(call_site)
    detail = (
        f"harness called provider method {method} on the host instead of host/evaluateChangeset"
    )
    degraded = [
        degradation(method, "lattice-fast-path", detail, requirement=r) for r in required
    ] or [degradation(method, "lattice-fast-path", detail)]
    coverage = {
        "exhaustive": False,
        "required": required,
        "enrolled": required,
        "ran": [],
        "degraded": degraded,
    }
    changeset = params.get("changeset") if isinstance(params, dict) else None
    cs_digest = changeset_digest(changeset) if isinstance(changeset, dict) else None
    baseline = state.baseline()
    req_digest = request_digest(method, params)
    assurance = assurance_block(ctx.assurance_mode)
    envelope: dict[str, Any] = {
        "pass": False,
        "decision": "deny",
        "callSite": call_site,
        "requestDigest": req_digest,
        "findings": [],
        "coverage": coverage,
        "policyDigest": policy.digest,
        "authorityEvidence": [],
        "validAsOf": {"rev": baseline["rev"]},
        "assurance": assurance,
    }
    if cs_digest is not None:
        envelope["changesetDigest"] = cs_digest
    envelope["receipt"] = build_receipt(
        kind="evaluate",
        clock=clock,
        request_digest=req_digest,
        policy_digest=policy.digest,
        baseline=baseline,
        valid_as_of={"rev": baseline["rev"]},
        coverage=coverage,
        assurance=assurance,
        call_site=call_site,
        changeset_digest=cs_digest,
    )
    return envelope
