"""Which edit providers a request may use, and one `edit/propose` run under the call-site budget.

Edit requirements are the policy's requirements with the `edit` capability: those the call-site's
gate lists, else every edit requirement of the policy (a repository may pin an edit provider
without making edits part of a gate). Their pinned providers are asked in policy order; with no
edit requirement, every trusted provider whose manifest declares `edit` is asked, advisory.
Launch, the read-only grant, callbacks and quarantine are the supervisor's, as for check and
inspect; a session that asked for write access is never sent a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import anyio

from asp_protocol.vocabulary import CallSite, CapabilityFamily
from reference_host.context import HostContext
from reference_host.edit.plan_checks import PlanCheck, check_plan
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.edit_session import EditProviderSession
from reference_host.sessions.session import SessionFailure
from reference_host.trust.policy import EffectivePolicy, Requirement
from reference_host.trust.targets import ProviderTarget, advisory_ids, pins_of


@dataclass
class EditTarget(ProviderTarget):
    """One edit provider asked, with its checked plan and whether its pin was granted."""

    plan: dict[str, Any] | None = None
    granted: bool = False
    family: ClassVar[CapabilityFamily] = "edit"


def edit_requirements(policy: EffectivePolicy, call_site: CallSite) -> list[Requirement]:
    """The edit requirements in force at *call_site* (see the module docstring)."""
    if policy.config is None:
        return []
    listed = [*policy.required_ids(call_site), *policy.optional_ids(call_site)]
    gated = [r for r in map(policy.requirement, listed) if r and "edit" in r.capabilities]
    return gated or [r for r in policy.config.requirements if "edit" in r.capabilities]


def edit_targets(
    ctx: HostContext, policy: EffectivePolicy, call_site: CallSite
) -> list[EditTarget]:
    required = set(policy.required_ids(call_site))
    listed = [
        ("required" if requirement.id in required else "optional", requirement)
        for requirement in edit_requirements(policy, call_site)
    ]
    targets = [
        EditTarget(pin.id, requirement.id, role, pin, requirement.id)
        for role, requirement, pin in pins_of(listed)
    ]
    return targets or [EditTarget(*ids) for ids in advisory_ids(ctx.providers, "edit")]


async def propose(
    ctx: HostContext,
    target: EditTarget,
    params: dict[str, Any],
    scope: EvaluationScope,
    scope_paths: list[str],
    deadline: float,
) -> None:
    """Ask *target* for a plan; on success `target.plan` is set, else a degradation is added."""

    target.provenance = target.provenance or ctx.provenance(target.provider_id, "edit")
    try:
        session = await ctx.supervisor.serving_session(
            target.provider_id, scope.baseline, deadline, "edit"
        )
        assert isinstance(session, EditProviderSession)
        async with session.lock:
            raw = await ctx.supervisor.scoped(
                target.provider_id, session, "edit/propose", params, scope, deadline
            )
            index = await anyio.to_thread.run_sync(scope.index)
            check: PlanCheck = check_plan(
                raw,
                proposal_id=params["proposalId"],
                provider_id=target.provider_id,
                baseline=scope.baseline,
                scope=scope_paths,
                index=index,
                served=scope.served | session.served_ever,
            )
    except SessionFailure as failure:
        return target.degrade(failure.reason, failure.detail, failure.state)
    if check.plan is None:
        return target.degrade(check.reason or "malformed", check.detail, session.state)
    target.plan = check.plan
