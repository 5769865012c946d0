"""`host/requestEditPlan`: ask the enrolled edit providers for a plan bound to a host baseline.

The request's baseline must be the committed snapshot (`{rev}`) or the current work tree
(`{rev, dirty}`), else -32011. The host issues the proposal id, sends `edit/propose` (content only
through the read-only callbacks), judges the answer (`plan_checks.py`) and caches an accepted plan
with its baseline and scope for `host/applyProposal`. Providers are asked in order until one
answers with a plan whose status is not `unsupported` (an `unsupported` answer is kept only when no
provider does better). Nothing is written: the workspace is only
read. When no provider produces an acceptable plan the result still carries a schema-valid
proposal — status `error`, refusal `provider-error`, written by the host and saying so — that is
never cached, so it can never be applied; the receipt's coverage says what failed.
"""

from __future__ import annotations

from typing import Any

import anyio

from asp_protocol.edit_plan import EDIT_CAPABILITY_VERSION
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.host_owned import find_host_owned_fields
from asp_protocol.jsonrpc import RequestContext
from reference_host.candidate import baseline_is_current
from reference_host.context import HostContext
from reference_host.coverage import no_provider
from reference_host.edit.params import parse_plan_params
from reference_host.edit.proposals import CachedProposal, proposal_receipt
from reference_host.edit.targets import edit_requirements, edit_targets, propose
from reference_host.receipts import Clock, ReceiptRequest, assurance_block
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.trust.targets import judge_authority, receipt_parties

METHOD = "host/requestEditPlan"


def host_refusal_plan(
    proposal_id: str, provider_id: str, baseline: dict[str, Any], detail: str
) -> dict[str, Any]:
    """A schema-valid, never-applicable EditPlan saying the host got no acceptable plan."""
    return {
        "proposalId": proposal_id,
        "provider": {
            "id": provider_id,
            "version": "unknown",
            "capabilityFamily": "edit",
            "capabilityVersion": EDIT_CAPABILITY_VERSION,
            "configDigest": "none",
        },
        "status": "error",
        "baseline": dict(baseline),
        "validAsOf": {"baseline": dict(baseline), "blobs": []},
        "touchedResources": [],
        "refusal": {
            "reason": "provider-error",
            "detail": ("written by the host, not the provider: " + detail)[:1000],
        },
    }


async def request_edit_plan(
    ctx: HostContext, params: Any, rpc: RequestContext | None = None
) -> dict[str, Any]:
    """The `requestEditPlanResult` for *params*."""
    clock = Clock()
    request = parse_plan_params(params)
    if find_host_owned_fields(request.args):
        raise AspError(ErrorCode.INVALID_PARAMS, "args may not carry host-owned fields")
    state = await anyio.to_thread.run_sync(ctx.workspace.state)
    policy = await anyio.to_thread.run_sync(ctx.policy_for, state)
    if not baseline_is_current(request.baseline, state):
        raise AspError(
            ErrorCode.STALE_BASELINE,
            "baseline is neither the committed snapshot nor the current work tree",
            detail=f"host has rev {state.rev}",
        )
    baseline: dict[str, Any] = {
        k: request.baseline[k] for k in ("rev", "dirty") if k in request.baseline
    }
    with_dirty = "dirty" in baseline
    index = await anyio.to_thread.run_sync(
        lambda: ctx.workspace.snapshot_index(state, with_dirty=with_dirty)
    )
    proposal_id = ctx.proposals.issue_id(request.proposal_id)
    provider_params: dict[str, Any] = {
        "operation": request.operation,
        "baseline": baseline,
        "scope": request.scope,
        "proposalId": proposal_id,
        "priorContext": {"requestedBy": "harness", "callSite": request.call_site},
    }
    if request.args:
        provider_params["args"] = request.args
    targets = edit_targets(ctx, policy, request.call_site)
    gated = set(policy.required_ids(request.call_site))
    required = [r.id for r in edit_requirements(policy, request.call_site) if r.id in gated]
    host_degraded: list[dict[str, Any]] = []
    if not targets:
        host_degraded.append(no_provider("edit", bool(required)))

    async def load(identity: str) -> bytes | None:
        paths = [p for p, b in index.items() if b == identity]
        return await anyio.to_thread.run_sync(
            lambda: ctx.workspace.resolve(identity, paths, state.tree)
        )

    deadline = anyio.current_time() + policy.budget_ms(request.call_site) / 1000
    chosen = None
    asked = []
    for target in targets:
        scope = EvaluationScope(baseline=baseline, index=lambda: index, referenced={}, load=load)
        await propose(ctx, target, provider_params, scope, request.scope_paths, deadline)
        target.granted = judge_authority(ctx, target, policy, request.call_site)
        asked.append(target)
        if target.plan is not None and (chosen is None or chosen.plan is None):
            chosen = target  # the first acceptable plan, replaced only by a non-unsupported one
        if target.plan is not None and target.plan["status"] != "unsupported":
            chosen = target
            break
    degraded = host_degraded + [d for t in asked for d in t.degraded]
    if chosen is not None and chosen.plan is not None:
        plan = chosen.plan
        ctx.proposals.add(
            CachedProposal(
                proposal_id,
                chosen.provider_id,
                plan,
                baseline,
                request.scope_paths,
                request.call_site,
                chosen.provenance or {},
            )
        )
    else:
        why = "; ".join(d["detail"] for d in degraded)[:800] or "no edit provider answered"
        plan = host_refusal_plan(
            proposal_id, asked[0].provider_id if asked else "none", baseline, why
        )
    ran = [chosen.coverage_id] if chosen is not None else []
    coverage = {
        "exhaustive": chosen is not None and not degraded,
        "required": required,
        "enrolled": list(required),
        "ran": ran,
        "degraded": degraded,
    }
    assurance = assurance_block(ctx.assurance_mode)
    receipt = proposal_receipt(
        ReceiptRequest(
            METHOD, params, clock, policy.digest, baseline, assurance, request.call_site
        ),
        plan,
        coverage,
        receipt_parties(asked, ran),
    )
    return {"proposal": plan, "receipt": receipt}
