"""Results of `host/status`, `host/capabilities` and `host/authority/status`.

Status is cheap by design: it reads one `git status`, the cached baseline policy and the trusted
manifests, and never launches a provider (an unlaunched provider shows `installed`). The host
serves `check` and `inspect`: `check` is available through an enrolled provider; `inspect` also
through an advisory trusted provider (e.g. the built-in `asp-python-inspect`) while no policy
requirement asks for inspect; `edit` is never available (unbuilt profile).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asp_protocol import OUTER_PROTOCOL
from asp_protocol.canonical import request_digest
from asp_protocol.models import CallSite, DegradationReason
from reference_host import HOST_NAME, __version__
from reference_host.context import HostContext
from reference_host.decision import degradation
from reference_host.policy import CALL_SITES, EffectivePolicy, PinnedProvider
from reference_host.receipts import Clock, assurance_block, build_receipt
from reference_host.supervisor import ProviderRecord
from reference_host.workspace import WorkTreeState

FAMILIES = ("inspect", "check", "edit")
SERVED = ("inspect", "check")  # families this host routes (edit is an unbuilt profile)
LEGACY = {"inspect": "sense", "check": "judge", "edit": "act"}
LOCAL_OVERRIDE = ".asp/local.json"


@dataclass
class Enrollment:
    """One provider as policy and the trusted environment see it."""

    id: str
    record: ProviderRecord
    pins: list[tuple[str, PinnedProvider]]  # (requirement id, pin)
    required_for: list[CallSite]
    optional_for: list[CallSite]

    @property
    def role(self) -> str:
        return "required" if self.required_for else "optional" if self.optional_for else "advisory"


def enrollments(ctx: HostContext, policy: EffectivePolicy) -> list[Enrollment]:
    """Policy-pinned providers first, then installed providers no requirement names."""
    found: dict[str, Enrollment] = {}
    for requirement in policy.config.requirements if policy.config else []:
        for pin in requirement.authority.providers:
            entry = found.get(pin.id)
            if entry is None:
                entry = found[pin.id] = Enrollment(
                    pin.id, ctx.supervisor.record(pin.id), [], [], []
                )
            entry.pins.append((requirement.id, pin))
            for site in CALL_SITES:
                if requirement.id in policy.required_ids(site) and site not in entry.required_for:
                    entry.required_for.append(site)
                elif requirement.id in policy.optional_ids(site) and site not in entry.optional_for:
                    entry.optional_for.append(site)
    for provider_id in ctx.providers:
        if provider_id not in found:
            found[provider_id] = Enrollment(
                provider_id, ctx.supervisor.record(provider_id), [], [], []
            )
    return list(found.values())


def provider_degraded(
    ctx: HostContext, policy: EffectivePolicy, entry: Enrollment, family: str = "check"
) -> list[dict[str, Any]]:
    """What stops this provider from serving *family* for its requirements right now."""
    record = entry.record
    out: list[dict[str, Any]] = []
    requirement = entry.pins[0][0] if entry.pins else None
    installed = record.installed
    state = record.current_lifecycle()
    if installed is None:
        reason: DegradationReason = "missing-required-provider" if entry.required_for else "missing"
        return [
            degradation(
                entry.id,
                reason,
                "no trusted manifest for this provider",
                requirement=requirement,
                capability=family,
                provider_state="unavailable",
            )
        ]
    if record.quarantined:
        out.append(
            degradation(
                entry.id,
                "quarantined",
                record.last_detail or "quarantined",
                requirement=requirement,
                capability=family,
                provider_state="quarantined",
            )
        )
    elif not installed.launchable:
        out.append(
            degradation(
                entry.id,
                "incompatible",
                f"manifest {installed.state}: {installed.detail}",
                requirement=requirement,
                capability=family,
                provider_state="incompatible",
            )
        )
    elif installed.protocol_version is None:
        out.append(
            degradation(
                entry.id,
                "skewed",
                "manifest lists no protocol version this host speaks (asp/1.0, asp/0.1)",
                requirement=requirement,
                capability=family,
                provider_state="incompatible",
            )
        )
    elif record.last_reason is not None:
        out.append(
            degradation(
                entry.id,
                record.last_reason,
                record.last_detail,
                requirement=requirement,
                capability=family,
                provider_state=state,
            )
        )
    if installed.declares_write:
        out.append(
            degradation(
                entry.id,
                "direct-write-risk",
                "manifest declares filesystem write access",
                requirement=requirement,
                capability=family,
                provider_state=state,
            )
        )
    for requirement_id, pin in entry.pins:
        check, _ = ctx.authority(pin, requirement_id, policy)
        if not check.granted:
            out.append(
                degradation(
                    entry.id,
                    "missing-authority",
                    "pin does not match: " + "; ".join(check.mismatches),
                    requirement=requirement_id,
                    capability=family,
                    provider_state=state,
                )
            )
    return out


def _pinned_families(policy: EffectivePolicy, entry: Enrollment) -> list[str]:
    """Without a manifest, a provider is expected to serve what its requirements ask for."""
    families: list[str] = []
    for requirement_id, _ in entry.pins:
        requirement = policy.requirement(requirement_id)
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
    lifecycle = record.current_lifecycle()
    if entry.pins:
        requirement_id, pin = entry.pins[0]
        _, evidence = ctx.authority(pin, requirement_id, policy)
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
    for family in FAMILIES:
        advertised = family in capabilities
        served = advertised and family in SERVED
        states[family] = {
            "capability": family,
            "advertised": advertised,
            "available": served and usable,
            "lifecycleState": lifecycle,
            "degraded": provider_degraded(ctx, policy, entry, family) if served else [],
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
    status["detail"] = _detail(record)
    return status


def _detail(record: ProviderRecord) -> str:
    if record.quarantined:
        return f"quarantined: {record.last_detail}"[:500]
    if not record.launched:
        return "not launched yet: providers start lazily on the first evaluation"
    if record.last_reason:
        return f"last failure {record.last_reason}: {record.last_detail}"[:500]
    return "session warm" if record.alive else "session ended; relaunched on next use"


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
            family = next((f for f in SERVED if f in requirement.capabilities), "check")
            for pin in requirement.authority.providers:
                if pin.id not in providers:
                    providers.append(pin.id)
                    degraded.extend(
                        d
                        for d in provider_degraded(ctx, policy, by_id[pin.id], family)
                        if d not in degraded
                    )
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
    for family in FAMILIES:
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
        # providers when no policy requirement asks for inspect (see inspect_query.inspect_targets)
        advisory_ok = family == "inspect" and not _requires(policy, family)
        available = family in SERVED and any(
            s["available"] and (advisory_ok or s["role"] != "advisory") for s in states
        )
        coverage[family] = {
            "available": available,
            "providers": providers,
            "requiredFor": required_for,
            "degraded": degraded,
            "capabilityStates": states,
            "legacyAliases": [LEGACY[family]],
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


@dataclass
class Snapshot:
    """Everything the three status-like results share, computed once per request."""

    state: WorkTreeState
    policy: EffectivePolicy
    entries: list[Enrollment]
    servers: list[dict[str, Any]]


def snapshot(ctx: HostContext) -> Snapshot:
    state = ctx.workspace.state()
    policy = ctx.policy_for(state)
    entries = enrollments(ctx, policy)
    servers = [server_status(ctx, policy, e) for e in entries]
    return Snapshot(state, policy, entries, servers)


def _status_receipt(
    ctx: HostContext,
    snap: Snapshot,
    kind: str,
    method: str,
    params: Any,
    clock: Clock,
    degraded: list[dict[str, Any]],
) -> dict[str, Any]:
    required = list(dict.fromkeys(r for s in CALL_SITES for r in snap.policy.required_ids(s)))
    enrolled = [e for e in snap.entries if e.pins]
    evidence, provenance, ids = [], [], []
    for entry in enrolled:
        requirement_id, pin = entry.pins[0]
        check, item = ctx.authority(pin, requirement_id, snap.policy)
        evidence.append(item)
        if entry.record.installed is not None:
            provenance.append(ctx.provenance(entry.id, check))
        ids.extend([entry.id, requirement_id])
    baseline = snap.state.baseline()
    return build_receipt(
        kind=kind,
        clock=clock,
        request_digest=request_digest(method, params if params is not None else {}),
        policy_digest=snap.policy.digest,
        baseline=baseline,
        valid_as_of={"rev": baseline["rev"]},
        coverage={
            "exhaustive": False,
            "required": required,
            "enrolled": required,
            "ran": [],
            "degraded": degraded,
        },
        assurance=assurance_block(ctx.assurance_mode),
        authority_evidence=evidence,
        provider_ids=ids,
        provenance=provenance,
    )


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def host_status(ctx: HostContext, params: Any) -> dict[str, Any]:
    clock = Clock()
    snap = snapshot(ctx)
    gates = gate_statuses(ctx, snap.policy, snap.entries)
    by_id = {s["id"]: s for s in snap.servers}
    capabilities = capability_coverage(ctx, snap.policy, snap.entries, by_id)
    degraded = _unique([d for g in gates.values() for d in g["degraded"]])
    baseline = snap.state.baseline()
    override = ctx.workspace.read_work_file(LOCAL_OVERRIDE) is not None
    policy_block: dict[str, Any] = {
        "source": snap.policy.source,
        "activation": snap.policy.activation,
        "policyDigest": snap.policy.digest,
        "localOverride": {
            "present": override,
            "path": LOCAL_OVERRIDE if override else None,
            "authorityEffect": "none",
            "detail": "a local override is advisory only and never affects gate authority",
        },
    }
    workspace: dict[str, Any] = {
        "root": str(ctx.workspace.root),
        "baseline": baseline,
        "validAsOf": dict(baseline),
    }
    if snap.policy.activation != "active":
        workspace["staleReason"] = f"repository policy rejected: {snap.policy.error}"[:500]
    return {
        "host": {
            "name": HOST_NAME,
            "version": __version__,
            "outerProtocol": OUTER_PROTOCOL,
            "state": "ready" if not degraded else "degraded",
            "bindingCandidate": "json-rpc-stdio",
        },
        "workspace": workspace,
        "policy": policy_block,
        "servers": snap.servers,
        "gates": gates,
        "capabilities": capabilities,
        "assuranceCapabilities": ["advisory", "gated"]
        if ctx.assurance_mode == "gated"
        else ["advisory"],
        "receipt": _status_receipt(ctx, snap, "status", "host/status", params, clock, degraded),
    }


def host_capabilities(ctx: HostContext, params: Any) -> dict[str, Any]:
    clock = Clock()
    snap = snapshot(ctx)
    gates = gate_statuses(ctx, snap.policy, snap.entries)
    by_id = {s["id"]: s for s in snap.servers}
    capabilities = capability_coverage(ctx, snap.policy, snap.entries, by_id)
    degraded = _unique([d for g in gates.values() for d in g["degraded"]])
    required = list(dict.fromkeys(r for s in CALL_SITES for r in snap.policy.required_ids(s)))
    return {
        "capabilities": capabilities,
        "sources": snap.servers,
        "coverage": {
            "exhaustive": False,
            "required": required,
            "enrolled": required,
            "ran": [],
            "degraded": degraded,
        },
        "legacyRoles": {
            "sense": capabilities["inspect"]["available"],
            "judge": capabilities["check"]["available"],
            "act": capabilities["edit"]["available"],
        },
        "receipt": _status_receipt(
            ctx, snap, "capabilities", "host/capabilities", params, clock, degraded
        ),
    }


def host_authority_status(ctx: HostContext, params: Any) -> dict[str, Any]:
    clock = Clock()
    snap = snapshot(ctx)
    degraded = _unique(
        [d for e in snap.entries if e.pins for d in provider_degraded(ctx, snap.policy, e)]
    )
    receipt = _status_receipt(
        ctx, snap, "authority-status", "host/authority/status", params, clock, degraded
    )
    return {
        "policyActivation": "base-active",
        "policyDigest": snap.policy.digest,
        "providers": snap.servers,
        "receipt": receipt,
    }
