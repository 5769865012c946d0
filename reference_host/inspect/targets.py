"""The inspect providers one `host/queryInspect` asks: which (pinned or advisory), each run once
under the call-site budget, then judged against its policy pin."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any, cast

import anyio

from asp_protocol.vocabulary import CallSite, DegradationReason
from reference_host.context import HostContext
from reference_host.coverage import add_degradation
from reference_host.inspect.answer_checks import check_inspect_result
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.inspect_session import InspectProviderSession
from reference_host.sessions.session import SessionFailure
from reference_host.trust.policy import EffectivePolicy, PinnedProvider


@dataclass
class Target:
    """One provider asked to answer: for a requirement (pinned) or advisory."""

    provider_id: str
    coverage_id: str
    role: str
    pin: PinnedProvider | None = None
    requirement_id: str | None = None
    degraded: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    blobs: tuple[str, ...] = ()
    truncated: bool = False
    ran: bool = False
    evidence: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None


def inspect_targets(
    ctx: HostContext, policy: EffectivePolicy, call_site: CallSite
) -> tuple[list[Target], list[str]]:
    """Pinned providers of the policy's inspect requirements, else advisory trusted inspect providers."""
    targets: list[Target] = []
    required: list[str] = []
    for role, requirement in policy.requirements_at(call_site):
        requirement_id = requirement.id
        if "inspect" not in requirement.capabilities:
            continue
        if role == "required":
            required.append(requirement_id)
        for pin in requirement.authority.providers:
            targets.append(Target(pin.id, requirement_id, role, pin, requirement_id))
    if not targets and not required:
        for provider_id, installed in sorted(ctx.providers.items()):
            if installed.manifest is not None and "inspect" in installed.manifest.capabilities:
                targets.append(Target(provider_id, f"{provider_id}/inspect", "advisory"))
    return targets, required


async def run_target(
    ctx: HostContext,
    target: Target,
    request: dict[str, Any],
    params: dict[str, Any],
    scope: EvaluationScope,
    allowed: Set[str],
    deadline: float,
) -> None:
    def degrade(reason: DegradationReason, detail: str, state: str | None = None) -> None:
        add_degradation(target, "inspect", reason, detail, state)

    try:
        session = await ctx.supervisor.session_for(
            target.provider_id, scope.baseline, deadline - anyio.current_time(), family="inspect"
        )
        assert isinstance(session, InspectProviderSession)
        target.provenance = ctx.provenance(target.provider_id, "inspect")
        if session.requests_write:
            return degrade(
                "direct-write-risk",
                "provider requested write access at initialize; no content served",
                session.state,
            )
        method = session.method_for(request["verb"])
        if method is None:
            return degrade(
                "unsupported",
                f"provider does not advertise the {request['verb']} verb",
                session.state,
            )
        async with session.lock:
            raw = await ctx.supervisor.scoped(
                target.provider_id, session, method, params, scope, deadline
            )
            check = check_inspect_result(
                raw,
                request["verb"],
                rev=scope.baseline["rev"],
                allowed_blobs=allowed,
                served_ever=session.served_ever,
            )
    except SessionFailure as failure:
        return degrade(failure.reason, failure.detail, failure.state)
    if check.result is None:
        return degrade(
            cast(DegradationReason, check.reason or "malformed"), check.detail, session.state
        )
    target.result, target.blobs, target.truncated, target.ran = (
        check.result,
        check.blobs,
        check.truncated,
        True,
    )


def judge_authority(
    ctx: HostContext, target: Target, policy: EffectivePolicy, call_site: CallSite
) -> None:
    if target.pin is None or target.requirement_id is None:
        return
    pin_check, evidence = ctx.authority(target.pin, target.requirement_id, policy, call_site)
    target.evidence = evidence
    if target.provenance is not None:
        target.provenance = ctx.provenance(target.provider_id, "inspect", pin_check)
    if not pin_check.granted:
        target.ran = False
        add_degradation(target, "inspect", "missing-authority", pin_check.mismatch_detail)
