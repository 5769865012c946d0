"""`host/evaluateChangeset`: freshness, blob resolution, provider runs, validation, the envelope.

A ChangeSet's baseline must be the committed snapshot (`{rev}`) or the full current snapshot
(`{rev, dirty}`); anything else, a `before` blob that does not match that baseline, or a blob the
host cannot resolve is `stale-baseline` (unresolvable blobs with detail `blob_unavailable: ...`)
and never allow. The per-call budget is min(policy `budgets.<callSite>Ms` — default interactive
10000, gate 30000, sweep 300000 — and the request's `timeoutMs`). If the outer request is
cancelled, the provider calls are cancelled with it (they get `$/cancelRequest`) and the caller
gets -32016 from the endpoint.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import anyio

from asp_protocol.canonical import changeset_digest, request_digest
from asp_protocol.changesets import parse_changeset
from asp_protocol.errors import AspError, ConnectionClosed, ErrorCode, RequestTimeout
from asp_protocol.jsonrpc import RequestContext
from asp_protocol.models import (
    CallSite,
    DegradationReason,
    LifecycleState,
)
from reference_host.context import HostContext
from reference_host.decision import ProviderRun, decide, degradation
from reference_host.policy import (
    CALL_SITES,
    POLICY_PATH,
    EffectivePolicy,
    PinnedProvider,
    touches_policy,
)
from reference_host.receipts import Clock, assurance_block, build_receipt
from reference_host.session import EvaluationScope, SessionFailure
from reference_host.validation import AssessmentCheck, validate_assessment
from reference_host.workspace import WorkTreeState

log = logging.getLogger(__name__)

METHOD = "host/evaluateChangeset"
PARAM_KEYS = frozenset({"callSite", "changeset", "comparison", "timeoutMs", "basePolicyDigest"})


@dataclass(frozen=True)
class EvaluateRequest:
    call_site: CallSite
    changeset: dict[str, Any]
    comparison: str
    timeout_ms: int | None
    base_policy_digest: str | None


def parse_params(params: Any) -> EvaluateRequest:
    """Bad params are -32602 (input); a malformed ChangeSet or path is -32013."""
    if not isinstance(params, dict):
        raise AspError(ErrorCode.INVALID_PARAMS, "params must be an object")
    unknown = sorted(set(params) - PARAM_KEYS)
    if unknown:
        raise AspError(
            ErrorCode.INVALID_PARAMS, "unknown parameter(s)", detail=", ".join(unknown)[:200]
        )
    call_site = params.get("callSite")
    if call_site not in CALL_SITES:
        raise AspError(
            ErrorCode.INVALID_PARAMS,
            "callSite must be interactive, gate or sweep",
            detail=repr(call_site)[:100],
        )
    comparison = params.get("comparison", "all")
    if comparison not in ("all", "introduced"):
        raise AspError(ErrorCode.INVALID_PARAMS, "comparison must be all or introduced")
    timeout = params.get("timeoutMs")
    if timeout is not None and (
        not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1
    ):
        raise AspError(ErrorCode.INVALID_PARAMS, "timeoutMs must be a positive integer")
    base = params.get("basePolicyDigest")
    if base is not None and not isinstance(base, str):
        raise AspError(ErrorCode.INVALID_PARAMS, "basePolicyDigest must be a string")
    if "changeset" not in params:
        raise AspError(ErrorCode.INVALID_PARAMS, "changeset is required")
    changeset = params["changeset"]
    parse_changeset(changeset, outer_blob_ids=True)
    return EvaluateRequest(call_site, changeset, comparison, timeout, base)


@dataclass
class Blobs:
    """The changeset's blob bytes, loaded once, and the paths each blob appears under."""

    store: dict[str, bytes]
    referenced: dict[str, set[str]]
    problems: list[str]


def load_blobs(
    ctx: HostContext, state: WorkTreeState, changeset: dict[str, Any], with_dirty: bool
) -> Blobs:
    """Resolve every before/after blob and check each `before` against the named baseline."""
    workspace = ctx.workspace
    store: dict[str, bytes] = {}
    referenced: dict[str, set[str]] = {}
    problems: list[str] = []
    for change in changeset["changes"]:
        path = change["path"]
        origin = change.get("from") or path
        if with_dirty and origin in state.differing:
            expected = state.differing[origin]
        else:
            expected = workspace.head_blob_id(state, origin)
        if change["kind"] == "create" and expected is not None:
            problems.append(f"create of {path} but the baseline already has it")
        elif change["kind"] != "create" and change.get("before") != expected:
            problems.append(f"before blob of {origin} does not match the baseline")
        for key, hints in (("before", [origin, path]), ("after", [path])):
            identity = change.get(key)
            if identity is None:
                continue
            referenced.setdefault(identity, set()).update(hints)
            if identity in store:
                continue
            data = workspace.resolve(identity, hints, state.tree)
            if data is None:
                problems.append(f"blob_unavailable: {identity} ({key} of {path})")
            else:
                store[identity] = data
    problems.sort(key=lambda p: not p.startswith("blob_unavailable"))
    return Blobs(store, referenced, problems)


@dataclass
class Invocation:
    """One provider's evaluation as the host saw it (before per-requirement authority)."""

    reason: DegradationReason | None = None
    detail: str = ""
    state: LifecycleState | None = None
    health: bool = False
    initialized: bool = False
    check: AssessmentCheck | None = None


def _degrader(run: ProviderRun, state: LifecycleState | None) -> Any:
    """A function adding a provider-lifecycle degradation to *run*."""

    def add(reason: DegradationReason, detail: str) -> None:
        run.degraded.append(
            degradation(
                run.provider_id,
                reason,
                detail,
                requirement=run.requirement_id,
                capability="check",
                provider_state=state,
            )
        )

    return add


class Evaluation:
    """One `host/evaluateChangeset` request."""

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
        self.rpc = rpc
        self.baseline = request.changeset["baseline"]
        self.digest = changeset_digest(request.changeset)

    async def invoke(
        self,
        provider_id: str,
        policy: EffectivePolicy,
        state: WorkTreeState,
        blobs: Blobs,
        deadline: float,
    ) -> Invocation:
        ctx = self.ctx
        try:
            session = await ctx.supervisor.session_for(
                provider_id, self.baseline, deadline - anyio.current_time()
            )
        except SessionFailure as failure:
            health = failure.reason in ("timed-out", "crashed")
            return Invocation(failure.reason, failure.detail, failure.state, health=health)
        if session.requests_write:
            return Invocation(
                "direct-write-risk",
                "provider requested write access at initialize; no content served",
                session.state,
                initialized=True,
            )
        assert session.check is not None
        with_dirty = "dirty" in self.baseline
        scope = EvaluationScope(
            baseline=self.baseline,
            index=lambda: ctx.workspace.snapshot_index(state, with_dirty=with_dirty),
            referenced=blobs.referenced,
            load=lambda identity: self._load(identity, blobs, state, with_dirty),
        )
        params = {
            "changeset": self.request.changeset,
            "scope": "changeset",
            "comparison": self.request.comparison,
            "callSite": self.request.call_site,
        }
        record = ctx.supervisor.record(provider_id)
        async with session.lock:
            try:
                raw = await session.evaluate(
                    params,
                    scope,
                    max(0.001, deadline - anyio.current_time()),
                    self._progress_forwarder(provider_id),
                )
            except RequestTimeout:
                await session.kill()
                ctx.supervisor.failed(
                    record,
                    "timed-out",
                    "timed-out",
                    "check/evaluate exceeded the budget",
                    counts=True,
                )
                return Invocation(
                    "timed-out",
                    "check/evaluate exceeded the call-site budget",
                    "timed-out",
                    health=True,
                    initialized=True,
                )
            except ConnectionClosed:
                ctx.supervisor.failed(
                    record,
                    "crashed",
                    "crashed",
                    "provider exited during check/evaluate",
                    counts=True,
                )
                return Invocation(
                    "crashed",
                    "provider exited during check/evaluate",
                    "crashed",
                    health=True,
                    initialized=True,
                )
            except AspError as exc:
                cancelled = exc.code == ErrorCode.CANCELLED.code
                detail = f"check/evaluate failed: code {exc.code}, failClass {exc.fail_class}"
                return Invocation(
                    "cancelled" if cancelled else "error",
                    detail,
                    session.state,
                    health=exc.fail_class == "health" and not cancelled,
                    initialized=True,
                )
            ctx.supervisor.succeeded(provider_id)
            check = validate_assessment(
                raw,
                provider_id=provider_id,
                declared_sources=session.check.diagnostic_sources,
                capability_version=session.check.capability_version,
                configuration=None,
                baseline=self.baseline,
                changeset_digest=self.digest,
                served_now=scope.served,
                served_ever=session.served_ever,
            )
        return Invocation(initialized=True, check=check, state=session.state)

    async def _load(
        self, identity: str, blobs: Blobs, state: WorkTreeState, with_dirty: bool
    ) -> bytes | None:
        data = blobs.store.get(identity)
        if data is not None:
            return data
        index = await anyio.to_thread.run_sync(
            lambda: self.ctx.workspace.snapshot_index(state, with_dirty=with_dirty)
        )
        paths = [p for p, b in index.items() if b == identity]
        return await anyio.to_thread.run_sync(
            lambda: self.ctx.workspace.resolve(identity, paths, state.tree)
        )

    def _progress_forwarder(self, provider_id: str) -> Any:
        rpc = self.rpc
        if rpc is None:
            return None

        async def forward(value: Any) -> None:
            if isinstance(value, dict) and value.get("kind") in ("report", "end"):
                message = value.get("message")
                report: dict[str, Any] = {
                    "kind": "report",
                    "message": f"{provider_id}: "
                    + (message[:200] if isinstance(message, str) else "working"),
                }
                if isinstance(value.get("percentage"), int) and 0 <= value["percentage"] <= 100:
                    report["percentage"] = value["percentage"]
                await rpc.progress(report)

        return forward

    def runs_for(
        self,
        provider_id: str,
        invocation: Invocation,
        wanted: list[tuple[str, PinnedProvider, str]],
        policy: EffectivePolicy,
    ) -> list[ProviderRun]:
        ctx = self.ctx
        runs = []
        for requirement_id, pin, role in wanted:
            check, evidence = ctx.authority(pin, requirement_id, policy, self.request.call_site)
            run = ProviderRun(provider_id, requirement_id, role)  # type: ignore[arg-type]
            if invocation.initialized:
                run.authority = evidence
                run.provenance = ctx.provenance(provider_id, check)
                run.authorized = check.granted
            add = _degrader(run, invocation.state)
            if invocation.reason is not None:
                add(invocation.reason, invocation.detail)
                run.health_failure = invocation.health
            elif invocation.check is not None:
                assessment = invocation.check
                if assessment.reason is not None:
                    add(assessment.reason, assessment.detail)
                else:
                    run.completed = True
                    run.diagnostics = assessment.diagnostics
                    run.unnamespaced = assessment.unnamespaced
                    run.blobs = (
                        list(assessment.assessment.valid_as_of.blobs)
                        if assessment.assessment
                        else []
                    )
            if invocation.initialized and not check.granted:
                add(
                    "missing-authority",
                    "policy pin does not match the trusted manifest: "
                    + "; ".join(check.mismatches),
                )
            requirement = policy.requirement(requirement_id)
            if requirement is not None and ctx.assurance_mode not in requirement.assurance:
                add(
                    "insufficient-assurance",
                    f"requirement needs {' or '.join(requirement.assurance)}; host achieves {ctx.assurance_mode}",
                )
            runs.append(run)
        return runs

    async def run_providers(
        self, policy: EffectivePolicy, state: WorkTreeState, blobs: Blobs
    ) -> list[ProviderRun]:
        site = self.request.call_site
        budget = policy.budget_ms(site)
        if self.request.timeout_ms is not None:
            budget = min(budget, self.request.timeout_ms)
        deadline = anyio.current_time() + budget / 1000
        plan: dict[str, list[tuple[str, PinnedProvider, str]]] = {}
        runs: list[ProviderRun] = []
        for role, ids in (
            ("required", policy.required_ids(site)),
            ("optional", policy.optional_ids(site)),
        ):
            for requirement_id in ids:
                requirement = policy.requirement(requirement_id)
                assert requirement is not None
                if "check" not in requirement.capabilities:
                    run = ProviderRun(requirement_id, requirement_id, role)  # type: ignore[arg-type]
                    run.degraded.append(
                        degradation(
                            requirement_id,
                            "unsupported",
                            "evaluation covers check requirements only",
                            requirement=requirement_id,
                        )
                    )
                    runs.append(run)
                    continue
                for pin in requirement.authority.providers:
                    plan.setdefault(pin.id, []).append((requirement_id, pin, role))
        results: dict[str, Invocation] = {}

        async def one(provider_id: str) -> None:
            results[provider_id] = await self.invoke(provider_id, policy, state, blobs, deadline)

        async with anyio.create_task_group() as tg:
            for provider_id in plan:
                tg.start_soon(one, provider_id)
        for provider_id, wanted in plan.items():
            runs.extend(self.runs_for(provider_id, results[provider_id], wanted, policy))
        return runs

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
        fresh = self.baseline.get("rev") == state.rev and (
            not with_dirty or self.baseline.get("dirty") == state.dirty
        )
        blobs = Blobs({}, {}, [])
        if not fresh:
            blockers.append(
                "changeset baseline is neither the committed snapshot {rev} nor the current work tree "
                f"snapshot (host has rev {state.rev})"
            )
        else:
            blobs = await anyio.to_thread.run_sync(
                load_blobs, ctx, state, request.changeset, with_dirty
            )
            blockers.extend(blobs.problems)
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
        else:
            runs = await self.run_providers(policy, state, blobs)
        outcome = decide(request.call_site, required, runs, host_degraded)
        valid: dict[str, Any] = {"rev": self.baseline["rev"]}
        if outcome.blobs:
            valid["blobs"] = outcome.blobs
        assurance = assurance_block(ctx.assurance_mode)
        req_digest = request_digest(METHOD, self.raw_params)
        receipt = build_receipt(
            kind="evaluate",
            clock=clock,
            request_digest=req_digest,
            policy_digest=policy.digest,
            baseline=self.baseline,
            valid_as_of=valid,
            coverage=outcome.coverage,
            assurance=assurance,
            authority_evidence=outcome.authority_evidence,
            provider_ids=outcome.provider_ids,
            provenance=outcome.provenance,
            call_site=request.call_site,
            changeset_digest=self.digest,
        )
        return {
            "pass": outcome.decision == "allow",
            "decision": outcome.decision,
            "callSite": request.call_site,
            "requestDigest": req_digest,
            "changesetDigest": self.digest,
            "findings": outcome.findings,
            "coverage": outcome.coverage,
            "policyDigest": policy.digest,
            "authorityEvidence": outcome.authority_evidence,
            "validAsOf": valid,
            "assurance": assurance,
            "receipt": receipt,
        }


async def evaluate_changeset(
    ctx: HostContext, params: Any, rpc: RequestContext | None
) -> dict[str, Any]:
    clock = Clock()
    request = parse_params(params)
    return await Evaluation(ctx, request, params, rpc).run(clock)
