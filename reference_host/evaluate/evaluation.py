"""`host/evaluateChangeset`: host-level degradations and the decision envelope with its receipt.

Params intake is `params.py`, freshness and blobs `../candidate.py`, provider runs
`runs.py`. A ChangeSet's baseline must be the committed snapshot (`{rev}`) or the full
current snapshot (`{rev, dirty}`); anything else, a `before` blob that does not match that
baseline, or a blob the host cannot resolve is `stale-baseline` (unresolvable blobs with detail
`blob_unavailable: ...`) and never allow. The per-call budget is min(policy
`budgets.<callSite>Ms` — default interactive 10000, gate 30000, sweep 300000 — and the request's
`timeoutMs`). If the outer request is cancelled, the provider calls are cancelled with it (they
get `$/cancelRequest`) and the caller gets -32016 from the endpoint.
"""

from __future__ import annotations

from typing import Any

import anyio

from asp_protocol.canonical import changeset_digest
from asp_protocol.jsonrpc import RequestContext
from reference_host.candidate import (
    Blobs,
    baseline_is_current,
    load_blobs,
    too_large_detail,
    uncarried_degradation,
    unusable_detail,
)
from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.evaluate.decision import ProviderRun, decide
from reference_host.evaluate.envelope import decision_envelope, evaluation_assurance
from reference_host.evaluate.params import METHOD, EvaluateRequest, parse_params
from reference_host.evaluate.path_coverage import (
    changed_paths,
    unanalysed,
    unanalysed_degradations,
)
from reference_host.evaluate.runs import ProviderRuns
from reference_host.receipts import Clock, ReceiptRequest, provider_notes
from reference_host.repo.submodules import left_out
from reference_host.repo.workspace import WorkTreeState
from reference_host.trust.policy import POLICY_PATH, touches_policy


class Evaluation:
    """One `host/evaluateChangeset` request: host-level degradations, provider runs, envelope."""

    def __init__(
        self,
        ctx: HostContext,
        request: EvaluateRequest,
        raw_params: Any,
        rpc: RequestContext | None,
    ) -> None:
        self.ctx = ctx
        self.raw_params = raw_params
        self.request = request
        self.baseline = request.changeset["baseline"]
        self.digest = changeset_digest(request.changeset)
        self.providers = ProviderRuns(ctx, request, self.digest, rpc)

    async def run(self, clock: Clock) -> dict[str, Any]:
        ctx = self.ctx
        request = self.request
        state = await anyio.to_thread.run_sync(ctx.workspace.state)
        policy = await anyio.to_thread.run_sync(ctx.policy_for, state)
        required = policy.required_ids(request.call_site)
        host_degraded: list[dict[str, Any]] = []
        if policy.activation != "active":
            host_degraded.append(
                degradation(
                    policy.source, "malformed", f"repository policy rejected: {policy.error}"
                )
            )
        blockers: list[str] = []
        with_dirty = "dirty" in self.baseline
        fresh = baseline_is_current(self.baseline, state)
        blobs = Blobs()
        unusable = unusable_detail(state)
        if unusable is not None:
            host_degraded.extend(
                degradation("git", "unavailable", unusable, requirement=r) for r in required
            )
            if not required:
                host_degraded.append(degradation("git", "unavailable", unusable))
        elif not fresh:
            blockers.append(
                "changeset baseline is neither the committed snapshot {rev} nor the current work tree "
                f"snapshot (host has rev {state.rev})"
            )
        else:
            blobs = await anyio.to_thread.run_sync(
                load_blobs, ctx, state, request.changeset, with_dirty
            )
            blockers.extend(blobs.problems)
            # whichever baseline: the working change is not all here
            left = await anyio.to_thread.run_sync(left_out, ctx.workspace, state)
            if left:
                host_degraded.append(uncarried_degradation(left))
            if blobs.too_large:
                detail = too_large_detail(blobs.too_large, ctx.workspace.max_blob_bytes)
                host_degraded.extend(
                    degradation(path, "incomplete", detail, capability="check")
                    for path in sorted(blobs.too_large)[:50]
                )
        paths = [p for c in request.changeset["changes"] for p in (c["path"], c.get("from")) if p]
        touched = touches_policy(paths)
        if touched:
            host_degraded.append(
                degradation(
                    POLICY_PATH,
                    "policy-self-authorization",
                    f"candidate changes {', '.join(touched)[:300]}; evaluated under the base "
                    "policy, which the change cannot authorize or weaken",
                )
            )
        if request.base_policy_digest is not None and request.base_policy_digest != policy.digest:
            host_degraded.append(
                degradation(
                    policy.source,
                    "stale",
                    f"basePolicyDigest does not match the active policy {policy.digest}",
                )
            )
        if blockers:
            detail = "; ".join(blockers)[:1000]
            targets = required or ["changeset"]
            host_degraded.extend(
                degradation(t, "stale-baseline", detail, requirement=t if required else None)
                for t in targets
            )
            runs: list[ProviderRun] = []
        elif unusable is not None:
            runs = []  # nothing of the workspace can be read: no provider may contribute
        else:
            runs = await self.providers.run(policy, state, blobs)
            host_degraded.extend(await self._workspace_written(state, runs))
            required_runs = [run for run in runs if run.role == "required"]
            if required and required_runs and all(run.assessed for run in required_runs):
                # a provider that failed is named by its own degradation; paths are listed only
                # when every required provider said what it covered
                covered = [run.covered for run in required_runs]
                missing = unanalysed(changed_paths(request.changeset), covered)
                host_degraded.extend(unanalysed_degradations(missing, required))
        outcome = decide(request.call_site, required, runs, host_degraded)
        assurance = evaluation_assurance(ctx.assurance_mode, provider_notes(self.providers.notes))
        receipt_request = ReceiptRequest(
            METHOD,
            self.raw_params,
            clock,
            policy.digest,
            self.baseline,
            assurance,
            request.call_site,
        )
        return decision_envelope(receipt_request, outcome, self.digest)

    async def _workspace_written(
        self, before: WorkTreeState, runs: list[ProviderRun]
    ) -> list[dict[str, Any]]:
        """Providers get no write grant, but the OS does not stop a trusted one from writing: the
        work tree is read again after they ran, and any change is `direct-write-risk` (deny)."""
        if not runs:
            return []
        after = await anyio.to_thread.run_sync(self.ctx.workspace.state)
        if after.baseline() == before.baseline():
            return []
        changed = sorted(
            p
            for p in set(before.differing) | set(after.differing)
            if before.differing.get(p, "-") != after.differing.get(p, "-")
        )
        shown = ", ".join(changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        launched = {run.provider_id for run in runs if run.authority is not None}
        providers = sorted(launched or {run.provider_id for run in runs})
        return [
            degradation(
                provider,
                "direct-write-risk",
                f"the work tree changed while providers ran ({shown or 'HEAD moved'}); a provider "
                "may have written the workspace, so nothing of this evaluation is trusted",
            )
            for provider in providers
        ]


async def evaluate_changeset(
    ctx: HostContext, params: Any, rpc: RequestContext | None
) -> dict[str, Any]:
    clock = Clock()
    request = parse_params(params)
    return await Evaluation(ctx, request, params, rpc).run(clock)
