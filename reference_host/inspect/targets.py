"""The inspect providers one `host/queryInspect` asks: which (pinned or advisory), each run once
under the call-site budget, then judged against its policy pin."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from asp_protocol.vocabulary import CallSite, CapabilityFamily, DegradationReason
from reference_host.context import HostContext
from reference_host.inspect.answer_checks import check_inspect_result
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.inspect_session import InspectProviderSession
from reference_host.sessions.session import SessionFailure
from reference_host.trust.policy import EffectivePolicy
from reference_host.trust.targets import ProviderTarget, advisory_ids, pins_of


@dataclass
class Target(ProviderTarget):
    """One inspect provider asked, with what its checked answer gave."""

    result: dict[str, Any] | None = None
    blobs: tuple[str, ...] = ()
    truncated: bool = False
    ran: bool = False
    family: ClassVar[CapabilityFamily] = "inspect"
    size: int = 0  # bytes of the provider's page as JSON (answer_checks.InspectCheck.size)


def inspect_targets(
    ctx: HostContext, policy: EffectivePolicy, call_site: CallSite
) -> tuple[list[Target], list[str]]:
    """Pinned providers of the policy's inspect requirements, else advisory trusted inspect providers."""
    inspecting = [
        (role, requirement)
        for role, requirement in policy.requirements_at(call_site)
        if "inspect" in requirement.capabilities
    ]
    required = [requirement.id for role, requirement in inspecting if role == "required"]
    targets = [
        Target(pin.id, requirement.id, role, pin, requirement.id)
        for role, requirement, pin in pins_of(inspecting)
    ]
    if not targets and not required:
        targets = [Target(*ids) for ids in advisory_ids(ctx.providers, "inspect")]
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
    try:
        session = await ctx.supervisor.serving_session(
            target.provider_id, scope.baseline, deadline, "inspect"
        )
        assert isinstance(session, InspectProviderSession)
        target.provenance = ctx.provenance(target.provider_id, "inspect")
        method = session.method_for(request["verb"])
        if method is None:
            return target.degrade(
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
        return target.degrade(failure.reason, failure.detail, failure.state)
    if check.result is None:
        return target.degrade(
            cast(DegradationReason, check.reason or "malformed"), check.detail, session.state
        )
    target.result, target.blobs, target.truncated, target.ran = (
        check.result,
        check.blobs,
        check.truncated,
        True,
    )
    target.size = check.size
