"""`host/applyProposal`: the one path in the project that writes the workspace.

Checks run in this order, and any refusal writes nothing: the proposal id must name a plan this
host accepted (unknown, evicted or never-accepted ids are refused first); a supplied `proposal`
or legacy `edit` must equal the cached one; the plan must be `complete` and not yet applied;
`basePolicyDigest`, when given, must be the active policy; the plan's provider needs explicit edit
authority (an edit requirement pinning it, with the pin matching the trusted manifest) and the
requirement's assurance must include what this host achieves (`advisory` or `gated` — it cannot
enforce `mediated-write` or `isolated`, so a policy asking only for those is refused, never
upgraded); the plan's baseline must still be current; every expected-before digest must match the
work tree (CAS) and every path pass the writer's policy; then the hypothetical after-state is
judged by the gate (`validation.gate_decision`) and only `allow` proceeds. All of this runs under
the workspace's one apply lock, so concurrent applies are serialized and only the first of two
overlapping ones can pass its CAS. Files are written one by one atomically (`writer.py`); the
transaction guarantee reported is always `none`.
"""

from __future__ import annotations

from typing import Any

import anyio

from asp_protocol.canonical import canonical_json
from asp_protocol.jsonrpc import RequestContext
from reference_host.candidate import baseline_is_current
from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.edit.afterstate import compute_after_state, still_unchanged
from reference_host.edit.params import ApplyRequest, parse_apply_params
from reference_host.edit.proposals import CachedProposal
from reference_host.edit.targets import edit_requirements
from reference_host.edit.writer import WriteRefused, write_files
from reference_host.receipts import Clock, ReceiptParties, ReceiptRequest, build_receipt
from reference_host.validation import gate_decision

METHOD = "host/applyProposal"
REFUSAL_DEGRADATION = {
    "missing-authority": "missing-authority",
    "insufficient-assurance": "insufficient-assurance",
    "direct-write-risk": "direct-write-risk",
    "unsupported": "unsupported",
    "stale-baseline": "stale-baseline",
    "conflict": "stale-baseline",
    "validation-denied": "blocking-diagnostic",
    "validation-indeterminate": "incomplete",
    "malformed": "malformed",
    "missing-blob": "missing",
    "precondition-failed": "stale",
}


def apply_assurance(mode: str) -> dict[str, Any]:
    """What an apply achieves, honestly: the host's mode, no transaction guarantee."""
    if mode == "gated":
        detail = (
            "gated: the host controls the gate-validation boundary (the after-state is judged at "
            "call-site gate before writing) and the interactive-apply boundary (only "
            "host/applyProposal writes); files are replaced one by one, no cross-file transaction"
        )
    else:
        detail = (
            "advisory: the host validates and writes but does not control a commit boundary; "
            "files are replaced one by one, no cross-file transaction"
        )
    return {"mode": mode, "transactionGuarantee": "none", "detail": detail}


class Apply:
    """One `host/applyProposal` request and the receipt pieces it gathers on the way."""

    def __init__(self, ctx: HostContext, params: Any, request: ApplyRequest) -> None:
        self.ctx = ctx
        self.params = params
        self.request = request
        self.clock = Clock()
        self.required: list[str] = []
        self.ran: list[str] = []
        self.evidence: list[dict[str, Any]] = []
        self.provenance: list[dict[str, Any]] = []
        self.provider_ids: list[str] = []
        self.decision: dict[str, Any] | None = None
        self.policy_digest = ""
        self.baseline: dict[str, Any] = {}

    def result(
        self,
        applied: bool,
        *,
        refusal: str | None = None,
        detail: str = "",
        conflicts: list[dict[str, str]] | None = None,
        after: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        degraded: list[dict[str, Any]] = []
        if refusal is not None:
            if self.decision is not None and self.decision["coverage"]["degraded"]:
                degraded.extend(self.decision["coverage"]["degraded"])
            else:
                degraded.append(
                    degradation(
                        self.required[0] if self.required else "host/applyProposal",
                        REFUSAL_DEGRADATION[refusal],  # type: ignore[arg-type]
                        detail or refusal,
                        requirement=self.required[0] if self.required else None,
                        capability="edit",
                    )
                )
        coverage = {
            "exhaustive": applied and not degraded,
            "required": list(self.required),
            "enrolled": list(self.required),
            "ran": list(self.ran) if applied else [],
            "degraded": degraded,
        }
        assurance = apply_assurance(self.ctx.assurance_mode)
        request = ReceiptRequest(
            METHOD,
            self.params,
            self.clock,
            self.policy_digest,
            self.baseline,
            assurance,
            self.request.call_site,
        )
        parties = ReceiptParties(
            authority_evidence=self.evidence,
            provider_ids=self.provider_ids,
            provenance=self.provenance,
        )
        receipt = build_receipt(
            "apply-attempt",
            request,
            {"rev": (after or self.baseline).get("rev", "")},
            coverage,
            parties,
            capability_family="edit",
            proposal_id=self.request.proposal_id,
        )
        out: dict[str, Any] = {
            "applied": applied,
            "proposalId": self.request.proposal_id,
            "baselineBefore": dict(self.baseline),
            "baselineAfter": after if applied else None,
            "assurance": assurance,
            "receipt": receipt,
        }
        if self.decision is not None:
            out["decision"] = self.decision
        if refusal is not None:
            out["refusal"] = {"reason": refusal, "detail": (detail or refusal)[:1000]}
            if conflicts:
                out["refusal"]["conflicts"] = conflicts[:100]
        return out

    def authority(self, cached: CachedProposal) -> tuple[str, str] | None:
        """(refusal reason, detail) when the plan's provider lacks edit authority or assurance."""
        ctx, state_policy = self.ctx, self._policy
        pins = [
            (requirement, pin)
            for requirement in edit_requirements(state_policy, self.request.call_site)
            for pin in requirement.authority.providers
            if pin.id == cached.provider_id
        ]
        if not pins:
            return (
                "missing-authority",
                f"no edit requirement pins {cached.provider_id}; proposals from it are never applied",
            )
        requirement, pin = pins[0]
        self.required = [requirement.id]
        check, evidence = ctx.authority(pin, requirement.id, state_policy, self.request.call_site)
        self.evidence = [evidence]
        self.provenance = [ctx.provenance(cached.provider_id, "edit", check)]
        self.provider_ids = [cached.provider_id, requirement.id]
        if not check.granted:
            return (
                "missing-authority",
                "edit pin does not match the trusted manifest: " + "; ".join(check.mismatches),
            )
        if ctx.assurance_mode not in requirement.assurance:
            return (
                "insufficient-assurance",
                f"requirement {requirement.id} needs {' or '.join(requirement.assurance)}; this host "
                f"achieves {ctx.assurance_mode} (it writes the real work tree itself and cannot "
                "enforce mediated-write or isolated)",
            )
        self.ran = [requirement.id]
        return None

    async def run(self, rpc: RequestContext | None) -> dict[str, Any]:
        ctx, request = self.ctx, self.request
        state = await anyio.to_thread.run_sync(ctx.workspace.state)
        self._policy = await anyio.to_thread.run_sync(ctx.policy_for, state)
        self.policy_digest = self._policy.digest
        self.baseline = state.baseline()
        cached = ctx.proposals.get(request.proposal_id)
        if cached is None:
            return self.result(
                False,
                refusal="precondition-failed",
                detail="unknown or uncached proposal id; request a plan from this host first",
            )
        plan = cached.plan
        if request.proposal is not None and canonical_json(request.proposal) != canonical_json(
            plan
        ):
            return self.result(
                False, refusal="malformed", detail="proposal differs from the cached plan"
            )
        if request.edit is not None and canonical_json(request.edit) != canonical_json(
            plan.get("workspaceEdit")
        ):
            return self.result(
                False, refusal="malformed", detail="edit differs from the cached plan"
            )
        refused = self.authority(cached)
        if refused is not None:
            return self.result(False, refusal=refused[0], detail=refused[1])
        if plan["status"] != "complete":
            return self.result(
                False, refusal="unsupported", detail=f"a {plan['status']} plan is never applied"
            )
        if cached.applied:
            return self.result(False, refusal="stale-baseline", detail="proposal already applied")
        if request.base_policy_digest not in (None, self.policy_digest):
            return self.result(
                False, refusal="stale-baseline", detail="basePolicyDigest is not the active policy"
            )
        if not baseline_is_current(cached.baseline, state):
            return self.result(
                False,
                refusal="stale-baseline",
                detail=f"plan baseline {cached.baseline['rev']} is no longer current ({state.rev})",
            )
        after = await anyio.to_thread.run_sync(compute_after_state, ctx, plan, cached.scope, state)
        if after.refusal is not None:
            return self.result(
                False, refusal=after.refusal, detail=after.detail, conflicts=after.conflicts
            )
        changeset = {"baseline": state.baseline(), "changes": after.changes}
        self.decision = await gate_decision(ctx, changeset, rpc)
        verdict = self.decision["decision"]
        if verdict != "allow":
            reason = "validation-denied" if verdict == "deny" else "validation-indeterminate"
            return self.result(
                False, refusal=reason, detail=f"gate decision over the after-state is {verdict}"
            )
        moved = await anyio.to_thread.run_sync(still_unchanged, ctx, after.writes)
        if moved:
            return self.result(
                False,
                refusal="conflict",
                detail="touched files changed during validation",
                conflicts=[{"path": p, "detail": "changed during validation"} for p in moved],
            )
        try:
            await anyio.to_thread.run_sync(write_files, ctx.workspace.root, after.writes)
        except WriteRefused as exc:
            return self.result(False, refusal="precondition-failed", detail=str(exc))
        cached.applied = True
        new_state = await anyio.to_thread.run_sync(ctx.workspace.state)
        return self.result(True, after=new_state.baseline())


async def apply_proposal(
    ctx: HostContext, params: Any, rpc: RequestContext | None = None
) -> dict[str, Any]:
    """The `applyProposalResult` for *params*; every apply runs under the workspace apply lock."""
    request = parse_apply_params(params)
    async with ctx.proposals.apply_lock:
        return await Apply(ctx, params, request).run(rpc)
