"""Roll-ups of provider state: per-call-site gate availability and per-family capability coverage."""

from __future__ import annotations

from typing import Any

from asp_protocol.vocabulary import CALL_SITES, CAPABILITY_FAMILIES, LEGACY_ROLE, CapabilityFamily
from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.status.providers import SERVED, Enrollment
from reference_host.trust.policy import EffectivePolicy


def gate_statuses(
    ctx: HostContext, policy: EffectivePolicy, entries: list[Enrollment]
) -> dict[str, Any]:
    by_id = {e.id: e for e in entries}
    gates: dict[str, Any] = {}
    for site in CALL_SITES:
        providers: list[str] = []
        capabilities: list[str] = []
        degraded: list[dict[str, Any]] = []
        if policy.activation != "active":
            degraded.append(
                degradation(
                    policy.source, "malformed", f"repository policy rejected: {policy.error}"
                )
            )
        for requirement_id in policy.required_ids(site):
            requirement = policy.requirement(requirement_id)
            assert requirement is not None
            capabilities.extend(c for c in requirement.capabilities if c not in capabilities)
            if ctx.assurance_mode not in requirement.assurance:
                degraded.append(
                    degradation(
                        requirement_id,
                        "insufficient-assurance",
                        f"requires {requirement.assurance}; host achieves {ctx.assurance_mode}",
                        requirement=requirement_id,
                    )
                )
            family: CapabilityFamily = next(
                (f for f in SERVED if f in requirement.capabilities), "check"
            )
            for pin in requirement.authority.providers:
                if pin.id not in providers:
                    providers.append(pin.id)
                    degraded.extend(d for d in by_id[pin.id].degraded[family] if d not in degraded)
        gates[site] = {
            "available": not degraded,
            "requiredProviders": providers,
            "requiredCapabilities": capabilities,
            "degraded": degraded,
        }
    return gates


def capability_coverage(
    ctx: HostContext,
    policy: EffectivePolicy,
    entries: list[Enrollment],
    servers: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    coverage: dict[str, Any] = {}
    for family in CAPABILITY_FAMILIES:
        states, providers, degraded = [], [], []
        required_for: list[str] = []
        for entry in entries:
            server = servers[entry.id]
            if family not in server["capabilities"]:
                continue
            health = server["capabilityStates"][family]
            states.append(
                {
                    "provider": entry.id,
                    "role": entry.role,
                    "capability": family,
                    "advertised": health["advertised"],
                    "available": health["available"],
                    "lifecycleState": health["lifecycleState"],
                    "degraded": health["degraded"],
                }
            )
            if entry.pins:
                providers.append(entry.id)
                degraded.extend(health["degraded"])
                required_for.extend(s for s in entry.required_for if s not in required_for)
        # check needs an enrolled provider; inspect also routes to advisory (trusted, unpinned)
        # providers when no policy requirement asks for inspect (see inspect/targets.inspect_targets)
        # edit plans may come from an advisory provider (apply then needs an edit pin, see
        # edit/apply.py), so an available edit provider of any role makes edit available
        advisory_ok = family == "edit" or (family == "inspect" and not _requires(policy, family))
        available = family in SERVED and any(
            s["available"] and (advisory_ok or s["role"] != "advisory") for s in states
        )
        coverage[family] = {
            "available": available,
            "providers": providers,
            "requiredFor": required_for,
            "degraded": degraded,
            "capabilityStates": states,
            "legacyAliases": [LEGACY_ROLE[family]],
        }
    return coverage


def _requires(policy: EffectivePolicy, family: str) -> bool:
    """Whether a requirement in force at some call-site asks for *family*."""
    for site in CALL_SITES:
        for requirement_id in (*policy.required_ids(site), *policy.optional_ids(site)):
            requirement = policy.requirement(requirement_id)
            if requirement is not None and family in requirement.capabilities:
                return True
    return False
