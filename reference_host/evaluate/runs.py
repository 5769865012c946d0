"""The provider side of one evaluation: each pinned provider runs once, all under one budget.

A provider pinned by several requirements is invoked once; its outcome is then judged per
requirement (authority, assurance) as `ProviderRun`s for `decision.decide`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from asp_protocol.jsonrpc import RequestContext
from asp_protocol.vocabulary import DegradationReason, LifecycleState
from reference_host.candidate import Blobs, blob_scope
from reference_host.context import HostContext
from reference_host.coverage import add_degradation, degradation
from reference_host.evaluate.assessment_checks import AssessmentCheck, validate_assessment
from reference_host.evaluate.decision import ProviderRun
from reference_host.evaluate.params import EvaluateRequest
from reference_host.evaluate.path_coverage import covered_paths
from reference_host.repo.workspace import WorkTreeState
from reference_host.sessions.session import SessionFailure
from reference_host.trust.policy import EffectivePolicy, PinnedProvider, RequirementRole

Wanted = list[tuple[str, PinnedProvider, RequirementRole]]  # (requirement id, pin, role)


@dataclass
class Invocation:
    """One provider's evaluation as the host saw it (before per-requirement authority)."""

    reason: DegradationReason | None = None
    detail: str = ""
    state: LifecycleState | None = None
    health: bool = False
    initialized: bool = False
    check: AssessmentCheck | None = None


def comparison_for(requested: str, offered: Sequence[str]) -> tuple[str, str | None]:
    """The comparison to ask a provider for, and a note for the result when it is not the request.

    `all` holds every finding `introduced` holds, so a provider that offers only `all` (the
    recorded asp/0.1 providers do) is asked `all` for an `introduced` request: the decision can
    only get stricter. Asking what it does not offer would get an `unsupported` Assessment and an
    indeterminate decision for no reason.
    """
    if requested in offered or requested != "introduced" or "all" not in offered:
        return requested, None
    return "all", (
        "comparison introduced was asked; the provider offers only all, so it was asked all "
        "and findings already in the touched files count too"
    )


def _degrader(run: ProviderRun, state: LifecycleState | None) -> Any:
    """A function adding a provider-lifecycle degradation to *run*."""

    def add(reason: DegradationReason, detail: str) -> None:
        add_degradation(run, "check", reason, detail, state)

    return add


@dataclass
class ProviderRuns:
    """Runs the check providers the policy pins for one `host/evaluateChangeset` request."""

    ctx: HostContext
    request: EvaluateRequest
    digest: str  # of the request's ChangeSet
    rpc: RequestContext | None
    # Host-authored notes per provider (mapped 0.1 answers, settings in force) for the result.
    notes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def baseline(self) -> dict[str, Any]:
        return self.request.changeset["baseline"]  # type: ignore[no-any-return]

    async def invoke(
        self,
        provider_id: str,
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
            return Invocation(failure.reason, failure.detail, failure.state, health=failure.health)
        if session.requests_write:
            return Invocation(
                "direct-write-risk",
                "provider requested write access at initialize; no content served",
                session.state,
                initialized=True,
            )
        if session.check is None:
            # A session without the check capability can never contribute coverage: degrade, never raise.
            return Invocation(
                "unsupported",
                "provider session does not advertise the check capability",
                "incompatible",
                initialized=True,
            )
        with_dirty = "dirty" in self.baseline
        scope = blob_scope(
            ctx,
            state,
            self.baseline,
            blobs,
            lambda: ctx.workspace.snapshot_index(state, with_dirty=with_dirty),
        )
        comparison, asked_note = comparison_for(self.request.comparison, session.check.comparisons)
        params: dict[str, Any] = {
            "changeset": self.request.changeset,
            "scope": "changeset",
            "comparison": comparison,
            "callSite": self.request.call_site,
        }
        settings = session.installed.settings
        configuration = settings.configuration if settings else None
        profile = session.profile
        notes = self.notes.setdefault(provider_id, [])
        if asked_note:
            notes.append(asked_note)
        if settings is not None:
            notes.append(settings.summary())
        if profile is not None:
            checks = settings.checks if settings else None
            unknown = profile.unknown_checks(checks)
            if unknown:
                return Invocation(
                    "unsupported",
                    f"trusted settings select checks the provider does not list: {', '.join(unknown)[:300]}",
                    session.state,
                    initialized=True,
                )
            params = profile.evaluate_params(params, checks)
        elif configuration is not None:
            params["configuration"] = configuration
        async with session.lock:
            try:
                raw = await ctx.supervisor.request(
                    provider_id,
                    session,
                    "check/evaluate",
                    lambda: session.evaluate(
                        params,
                        scope,
                        max(0.001, deadline - anyio.current_time()),
                        self._progress_forwarder(provider_id),
                    ),
                )
            except SessionFailure as failure:
                return Invocation(
                    failure.reason,
                    failure.detail,
                    failure.state,
                    health=failure.health,
                    initialized=True,
                )
            expected_digest = None
            if profile is not None:
                raw, mapped = profile.map_assessment(raw)
                expected_digest = profile.expected_config_digest(raw)
                notes.append(profile.result_note(mapped))
            check = validate_assessment(
                raw,
                provider_id=provider_id,
                declared_sources=session.check.diagnostic_sources,
                capability_version=session.check.capability_version,
                configuration=configuration,
                expected_digest=expected_digest,
                baseline=self.baseline,
                changeset_digest=self.digest,
                served_now=scope.served,
                served_ever=session.served_ever,
            )
        return Invocation(initialized=True, check=check, state=session.state)

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
        wanted: Wanted,
        policy: EffectivePolicy,
    ) -> list[ProviderRun]:
        ctx = self.ctx
        runs = []
        for requirement_id, pin, role in wanted:
            check, evidence = ctx.authority(pin, requirement_id, policy, self.request.call_site)
            run = ProviderRun(provider_id, requirement_id, role)
            if invocation.initialized:
                run.authority = evidence
                run.provenance = ctx.provenance(provider_id, "check", check)
                run.authorized = check.granted
            add = _degrader(run, invocation.state)
            if invocation.reason is not None:
                add(invocation.reason, invocation.detail)
                run.health_failure = invocation.health
            elif invocation.check is not None:
                assessment = invocation.check
                if assessment.reason in (None, "incomplete", "unsupported"):
                    run.covered = covered_paths(assessment.assessment, assessment.reason is None)
                    run.assessed = True
                    # a partial Assessment's findings are about the files it did analyse: shown
                    # (decision.py keeps them advisory), never dropped with the paths it could not
                    run.diagnostics = assessment.diagnostics
                    run.unnamespaced = assessment.unnamespaced
                if assessment.reason is not None:
                    add(assessment.reason, assessment.detail)
                else:
                    run.completed = True
                    run.blobs = (
                        list(assessment.assessment.valid_as_of.blobs)
                        if assessment.assessment
                        else []
                    )
            if invocation.initialized and not check.granted:
                add("missing-authority", check.mismatch_detail)
            requirement = policy.requirement(requirement_id)
            if requirement is not None and ctx.assurance_mode not in requirement.assurance:
                add(
                    "insufficient-assurance",
                    f"requirement needs {' or '.join(requirement.assurance)}; host achieves {ctx.assurance_mode}",
                )
            runs.append(run)
        return runs

    async def run(
        self, policy: EffectivePolicy, state: WorkTreeState, blobs: Blobs
    ) -> list[ProviderRun]:
        """Every required and optional check requirement of the call-site, as ProviderRuns."""
        site = self.request.call_site
        budget = policy.budget_ms(site)
        if self.request.timeout_ms is not None:
            budget = min(budget, self.request.timeout_ms)
        deadline = anyio.current_time() + budget / 1000
        plan: dict[str, Wanted] = {}
        runs: list[ProviderRun] = []
        for role, requirement in policy.requirements_at(site):
            requirement_id = requirement.id
            if "check" not in requirement.capabilities:
                run = ProviderRun(requirement_id, requirement_id, role)
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
            results[provider_id] = await self.invoke(provider_id, state, blobs, deadline)

        async with anyio.create_task_group() as tg:
            for provider_id in plan:
                tg.start_soon(one, provider_id)
        for provider_id, wanted in plan.items():
            runs.extend(self.runs_for(provider_id, results[provider_id], wanted, policy))
        return runs
