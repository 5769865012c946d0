"""Per-provider state as status, capabilities and authority status show it (never launches).

One provider's view for one request (`Enrollment`): which requirements pin it and at which
call-sites, each pin checked once against the trusted manifest with the authorityEvidence it
yields, its lifecycle read once, and what degrades it per served capability family. Every status
result, roll-up and receipt reads this view; nothing recomputes a pin check or a degradation.

The views are kept between requests (status/snapshot.py) under `views_key`: everything they read
that can change while the host runs — each provider record's and session's state, the trusted
providers, the policy, the assurance mode. A read added here that is not in the key would be
served stale; tests/host/test_host_status_views.py changes each input between two statuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asp_protocol.vocabulary import (
    CALL_SITES,
    CAPABILITY_FAMILIES,
    CallSite,
    CapabilityFamily,
    DegradationReason,
    LifecycleState,
)
from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.sessions.confine import DECLARED, ENFORCED
from reference_host.sessions.supervisor import ProviderRecord
from reference_host.trust.manifests import PinCheck
from reference_host.trust.policy import EffectivePolicy, PinnedProvider

SERVED: tuple[CapabilityFamily, ...] = ("inspect", "check", "edit")  # families this host routes


@dataclass
class Pin:
    """One requirement's pin of the provider, checked once against the trusted manifest."""

    requirement_id: str
    pin: PinnedProvider
    check: PinCheck
    evidence: dict[str, Any]  # the authorityEvidence the check yields (no call-site)


@dataclass
class Enrollment:
    """One provider as policy and the trusted environment see it, for one request."""

    id: str
    record: ProviderRecord
    pins: list[Pin] = field(default_factory=list)
    required_for: list[CallSite] = field(default_factory=list)
    optional_for: list[CallSite] = field(default_factory=list)
    lifecycle: LifecycleState = "exited"
    degraded: dict[CapabilityFamily, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def role(self) -> str:
        return "required" if self.required_for else "optional" if self.optional_for else "advisory"


def views_key(ctx: HostContext, policy: EffectivePolicy) -> tuple[object, ...] | None:
    """What the views under *policy* are made from; None when they cannot be kept (a crashed
    provider's detail ends with its stderr, which grows with no trace in the record)."""
    records = []
    for provider_id, record in tuple(ctx.supervisor.records.items()):
        session = record.session
        if record.last_reason == "crashed" and not record.quarantined and session is not None:
            return None
        live = None if session is None else (session, session.alive, session.state)
        sessions = tuple((family, s, s.alive) for family, s in record.sessions.items())
        records.append(
            (
                provider_id,
                record.installed,
                record.quarantined,
                record.launched,
                record.failures,
                record.last_reason,
                record.last_detail,
                record.lifecycle,
                live,
                sessions,
            )
        )
    # compared by identity first: the trusted providers are the same objects unless reloaded
    return policy, ctx.assurance_mode, tuple(ctx.providers.items()), tuple(records)


def enrollments(ctx: HostContext, policy: EffectivePolicy) -> list[Enrollment]:
    """Policy-pinned providers first, then installed providers no requirement names; each with
    its pins checked, its lifecycle and its degradations per served family, computed once."""
    found: dict[str, Enrollment] = {}
    for requirement in policy.config.requirements if policy.config else []:
        for pin in requirement.authority.providers:
            entry = found.get(pin.id)
            if entry is None:
                entry = found[pin.id] = Enrollment(pin.id, ctx.supervisor.record(pin.id))
            check, evidence = ctx.authority(pin, requirement.id, policy)
            entry.pins.append(Pin(requirement.id, pin, check, evidence))
            for site in CALL_SITES:
                if requirement.id in policy.required_ids(site) and site not in entry.required_for:
                    entry.required_for.append(site)
                elif requirement.id in policy.optional_ids(site) and site not in entry.optional_for:
                    entry.optional_for.append(site)
    for provider_id in ctx.providers:
        if provider_id not in found:
            found[provider_id] = Enrollment(provider_id, ctx.supervisor.record(provider_id))
    for entry in found.values():
        entry.lifecycle = entry.record.current_lifecycle()
        entry.degraded = {family: _degraded(entry, family) for family in SERVED}
    return list(found.values())


def _degraded(entry: Enrollment, family: CapabilityFamily) -> list[dict[str, Any]]:
    """What stops this provider from serving *family* for its requirements right now."""
    record = entry.record
    out: list[dict[str, Any]] = []
    requirement = entry.pins[0].requirement_id if entry.pins else None
    installed = record.installed
    state = entry.lifecycle

    def add(
        reason: DegradationReason,
        detail: str,
        provider_state: str,
        requirement: str | None = requirement,
    ) -> None:
        out.append(
            degradation(
                entry.id,
                reason,
                detail,
                requirement=requirement,
                capability=family,
                provider_state=provider_state,
            )
        )

    if installed is None:
        reason: DegradationReason = "missing-required-provider" if entry.required_for else "missing"
        add(reason, "no trusted manifest for this provider", "unavailable")
        return out
    if record.quarantined:
        add("quarantined", record.last_detail or "quarantined", "quarantined")
    elif not installed.launchable:
        add("incompatible", f"manifest {installed.state}: {installed.detail}", "incompatible")
    elif installed.protocol_version is None:
        add(
            "skewed",
            "manifest lists no protocol version this host speaks (asp/1.0, asp/0.1)",
            "incompatible",
        )
    elif record.last_reason is not None:
        add(record.last_reason, record.last_detail, state)
    if installed.declares_write:
        add("direct-write-risk", "manifest declares filesystem write access", state)
    for pin in entry.pins:
        if not pin.check.granted:
            add(
                "missing-authority",
                "pin does not match: " + "; ".join(pin.check.mismatches),
                state,
                pin.requirement_id,
            )
    return out


def _pinned_families(policy: EffectivePolicy, entry: Enrollment) -> list[str]:
    """Without a manifest, a provider is expected to serve what its requirements ask for."""
    families: list[str] = []
    for pin in entry.pins:
        requirement = policy.requirement(pin.requirement_id)
        for family in requirement.capabilities if requirement else ():
            if family not in families:
                families.append(family)
    return families or ["check"]


def server_status(ctx: HostContext, policy: EffectivePolicy, entry: Enrollment) -> dict[str, Any]:
    record = entry.record
    installed = record.installed
    manifest = installed.manifest if installed else None
    capabilities = (
        list(dict.fromkeys(manifest.capabilities))
        if manifest and manifest.capabilities
        else _pinned_families(policy, entry)
    )
    lifecycle = entry.lifecycle
    if entry.pins:
        evidence = entry.pins[0].evidence
    else:
        evidence = {
            "identity": manifest.provenance.publisher if manifest else entry.id,
            "integrity": manifest.artifact.fingerprint if manifest else "unknown",
            "conformance": (installed.conformance_claims or ["not_claimed"])[0]
            if installed
            else "not_claimed",
            "isolation": ctx.assurance_mode,
            "authority": {
                "granted": False,
                "requirement": "(not enrolled)",
                "policyDigest": policy.digest,
            },
        }
    server_state = record.server_state()
    enrollment = (
        "quarantined"
        if record.quarantined
        else "missing"
        if installed is None
        else "incompatible"
        if server_state == "incompatible"
        else "enrolled"
        if entry.required_for
        else "optional"
        if entry.optional_for
        else "installed-not-enrolled"
    )
    usable = server_state in ("ready", "installed", "degraded")
    states = {}
    for family in CAPABILITY_FAMILIES:
        advertised = family in capabilities
        served = advertised and family in SERVED
        states[family] = {
            "capability": family,
            "advertised": advertised,
            "available": served and usable,
            "lifecycleState": lifecycle,
            "degraded": entry.degraded[family] if served else [],
        }
    status: dict[str, Any] = {
        "id": entry.id,
        "capabilities": capabilities,
        "state": server_state,
        "lifecycleState": lifecycle,
        "capabilityStates": states,
        "requiredFor": list(entry.required_for),
        "enrollmentState": enrollment,
        "authorityEvidence": evidence,
        "role": entry.role,
        "manifestState": installed.state if installed else "missing",
        "accessExpectationsDeclared": manifest is not None,
    }
    if installed is not None:
        status["manifest"] = installed.path
        status["manifestDetail"] = {
            "path": installed.path,
            "trustEffect": "metadata-only",
            "launchAuthority": False,
            "gateAuthority": False,
            "detail": installed.detail
            or installed.checksum_detail
            or "trusted-environment manifest",
        }
    status["detail"] = f"{_detail(record)}; grant: {ENFORCED}; {DECLARED}"
    return status


def _detail(record: ProviderRecord) -> str:
    """Lifecycle, then the negotiated protocol of each running session and the settings in force."""
    extra = [
        f"{family} session negotiated {session.protocol_version}"
        + (" (asp/0.1 compatibility profile)" if session.profile is not None else "")
        for family, session in record.sessions.items()
        if session.alive
    ]
    settings = record.installed.settings if record.installed else None
    if settings is not None:
        extra.append(settings.summary())
    base = _lifecycle_detail(record)
    text = "; ".join([base, *extra])[:1000] if extra else base
    crashed = record.last_reason == "crashed" and not record.quarantined
    tail = record.session.stderr_excerpt() if crashed and record.session is not None else ""
    return f"{text}\n{tail}" if tail else text


def _lifecycle_detail(record: ProviderRecord) -> str:
    if record.quarantined:
        return f"quarantined: {record.last_detail}"[:500]
    if not record.launched:
        return "not launched yet: providers start lazily on the first evaluation"
    if record.last_reason:
        return f"last failure {record.last_reason}: {record.last_detail}"[:500]
    return "session warm" if record.alive else "session ended; relaunched on next use"
