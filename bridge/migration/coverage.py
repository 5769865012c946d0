"""Coverage map: for each legacy name, what the host says today about the capability behind it.

Reads a `host/capabilities` and/or `host/status` result (untrusted host data: wrong-typed fields
are ignored, strings are length-capped) and answers per item `served`, `served-degraded`,
`not-served` or `unknown-legacy-name`, with the providers, lifecycle states, advertised legacy
aliases, degradations and call-sites that require it. It reports; it never claims a replacement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from asp_protocol.vocabulary import CALL_SITES, LEGACY_ROLES
from bridge.migration.base import Model
from bridge.migration.legacy_names import NameMapping, map_names

CoverageStatus = Literal["served", "served-degraded", "not-served", "unknown-legacy-name"]
UNHEALTHY_LIFECYCLE = frozenset(
    {"crashed", "timed-out", "incompatible", "malformed", "unavailable", "quarantined", "degraded"}
)
UNHEALTHY_SERVER_STATE = frozenset({"degraded", "unavailable", "quarantined", "incompatible"})
MAX_HOST_STRING = 300


class Degradation(Model):
    source: str
    reason: str
    detail: str
    capability: str | None = None
    where: str


class ProviderState(Model):
    id: str
    serves: bool
    role: str | None = None
    state: str | None = None
    lifecycle_state: str | None = None
    enrollment_state: str | None = None
    advertised: bool | None = None
    available: bool | None = None
    legacy_roles: tuple[str, ...] = ()
    degraded: tuple[str, ...] = ()


class CoverageItem(Model):
    """One legacy name's row in the coverage map."""

    name: str
    mapping: NameMapping
    status: CoverageStatus
    reason: str
    family_available: bool | None = None
    providers: tuple[ProviderState, ...] = ()
    lifecycle_states: tuple[str, ...] = ()
    legacy_aliases_advertised: tuple[str, ...] = ()
    legacy_alias_advertised: bool | None = None
    degraded: tuple[Degradation, ...] = ()
    required_at: tuple[str, ...] = ()
    gate_requires: bool = False
    notes: tuple[str, ...] = ()


def _s(value: Any) -> str:
    text = value if isinstance(value, str) else "" if value is None else str(value)
    return text if len(text) <= MAX_HOST_STRING else text[:MAX_HOST_STRING] + "…"


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strs(value: Any) -> list[str]:
    return [_s(v) for v in _list(value) if isinstance(v, str)]


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _degradations(items: Any, where: str, family: str) -> list[Degradation]:
    out = []
    for d in _list(items):
        d = _obj(d)
        capability = d.get("capability")
        if isinstance(capability, str) and capability != family:
            continue
        out.append(
            Degradation(
                source=_s(d.get("source")),
                reason=_s(d.get("reason")),
                detail=_s(d.get("detail")),
                capability=_s(capability) if isinstance(capability, str) else None,
                where=where,
            )
        )
    return out


class HostView:
    """The parts of a capabilities/status result the coverage map reads, per capability family."""

    def __init__(self, capabilities: Mapping[str, Any] | None, status: Mapping[str, Any] | None):
        self.capabilities = _obj(capabilities)
        self.status = _obj(status)

    def all_family_status(self, family: str) -> list[tuple[str, Mapping[str, Any]]]:
        out = []
        for label, result in (
            ("host/capabilities", self.capabilities),
            ("host/status", self.status),
        ):
            cap = _obj(result.get("capabilities")).get(family)
            if isinstance(cap, Mapping):
                out.append((label, cap))
        return out

    def servers(self) -> list[Mapping[str, Any]]:
        seen: dict[str, Mapping[str, Any]] = {}
        for server in [
            *_list(self.capabilities.get("sources")),
            *_list(self.status.get("servers")),
        ]:
            server = _obj(server)
            sid = server.get("id")
            if isinstance(sid, str) and sid not in seen:
                seen[sid] = server
        return list(seen.values())

    def legacy_roles(self) -> list[str]:
        roles = _obj(self.capabilities.get("legacyRoles"))
        return [alias for alias in LEGACY_ROLES if roles.get(alias) is True]

    def gates(self) -> Mapping[str, Any]:
        return _obj(self.status.get("gates"))


def _providers(
    view: HostView, family: str, caps: list[tuple[str, Mapping[str, Any]]]
) -> list[ProviderState]:
    listed: set[str] = set()
    per: dict[str, dict[str, Any]] = {}
    for _, cap in caps:
        listed.update(_strs(cap.get("providers")))
        for state in _list(cap.get("capabilityStates")):
            state = _obj(state)
            pid = state.get("provider")
            if not isinstance(pid, str) or state.get("capability", family) != family:
                continue
            entry = per.setdefault(_s(pid), {})
            entry.setdefault("role", state.get("role"))
            entry.setdefault("lifecycle", state.get("lifecycleState"))
            entry.setdefault("advertised", state.get("advertised"))
            entry.setdefault("available", state.get("available"))
            entry.setdefault("degraded", []).extend(
                _degradations(state.get("degraded"), "capabilityStates", family)
            )
    for server in view.servers():
        sid = _s(server.get("id"))
        health = _obj(_obj(server.get("capabilityStates")).get(family))
        if family not in _strs(server.get("capabilities")) and sid not in listed and sid not in per:
            continue
        entry = per.setdefault(sid, {})
        entry["state"] = server.get("state")
        entry["enrollment"] = server.get("enrollmentState")
        entry["roles"] = _strs(server.get("roles"))
        entry.setdefault("role", server.get("role"))
        entry.setdefault("lifecycle", health.get("lifecycleState", server.get("lifecycleState")))
        entry.setdefault("advertised", health.get("advertised"))
        entry.setdefault("available", health.get("available"))
        entry.setdefault("degraded", []).extend(
            _degradations(health.get("degraded"), "server", family)
        )
    for pid in listed:
        per.setdefault(pid, {})
    out = []
    for pid in sorted(per):
        e = per[pid]
        available = _bool(e.get("available"))
        state = e.get("state")
        serves = (pid in listed or available is True) and available is not False
        out.append(
            ProviderState(
                id=pid,
                serves=serves and state not in UNHEALTHY_SERVER_STATE,
                role=_s(e["role"]) if isinstance(e.get("role"), str) else None,
                state=_s(state) if isinstance(state, str) else None,
                lifecycle_state=_s(e["lifecycle"]) if isinstance(e.get("lifecycle"), str) else None,
                enrollment_state=_s(e["enrollment"])
                if isinstance(e.get("enrollment"), str)
                else None,
                advertised=_bool(e.get("advertised")),
                available=available,
                legacy_roles=tuple(e.get("roles", ())),
                degraded=tuple(sorted({f"{d.reason}: {d.detail}" for d in e.get("degraded", [])})),
            )
        )
    return out


def coverage_item(mapping: NameMapping, view: HostView) -> CoverageItem:
    """The coverage row for one mapped name against the host's answer."""
    name = mapping.requested or mapping.name
    if not mapping.known:
        return CoverageItem(
            name=name, mapping=mapping, status="unknown-legacy-name", reason=mapping.note
        )
    family = mapping.family
    if family is None:
        return CoverageItem(
            name=name, mapping=mapping, status="not-served", reason="no ASP capability family"
        )
    notes = []
    if mapping.kind in ("legacy-tool-surface",) or (mapping.verb and family != "check"):
        notes.append(
            "host/capabilities reports capability families, not verbs or operations: "
            "this row is the family's answer."
        )
    caps = view.all_family_status(family)
    cap = caps[0][1] if caps else None
    providers = _providers(view, family, caps)
    aliases = sorted(
        {a for _, c in caps for a in _strs(c.get("legacyAliases"))}
        | ({mapping.legacy_alias} & set(view.legacy_roles()) if mapping.legacy_alias else set())
        | {r for p in providers for r in p.legacy_roles}
    )
    degraded = [d for label, c in caps for d in _degradations(c.get("degraded"), label, family)]
    required_at = {cs for _, c in caps for cs in _strs(c.get("requiredFor")) if cs in CALL_SITES}
    for cs in CALL_SITES:
        gate = _obj(view.gates().get(cs))
        if family in _strs(gate.get("requiredCapabilities")):
            required_at.add(cs)
        degraded.extend(
            _degradations(
                [d for d in _list(gate.get("degraded")) if _obj(d).get("capability") == family],
                f"gates.{cs}",
                family,
            )
        )
    degraded = list({(d.source, d.reason, d.detail): d for d in degraded}.values())
    family_available = _bool(cap.get("available")) if cap is not None else None
    status, reason = _status(mapping, cap, family_available, providers, degraded)
    return CoverageItem(
        name=name,
        mapping=mapping,
        status=status,
        reason=reason,
        family_available=family_available,
        providers=tuple(providers),
        lifecycle_states=tuple(sorted({p.lifecycle_state for p in providers if p.lifecycle_state})),
        legacy_aliases_advertised=tuple(aliases),
        legacy_alias_advertised=(mapping.legacy_alias in aliases) if mapping.legacy_alias else None,
        degraded=tuple(degraded),
        required_at=tuple(cs for cs in CALL_SITES if cs in required_at),
        gate_requires="gate" in required_at,
        notes=tuple(notes),
    )


def _status(
    mapping: NameMapping,
    cap: Mapping[str, Any] | None,
    available: bool | None,
    providers: list[ProviderState],
    degraded: list[Degradation],
) -> tuple[CoverageStatus, str]:
    family = mapping.family
    if mapping.outer_method is None:
        return "not-served", "no host outer-seam method serves this to a harness. " + mapping.note
    if cap is None:
        return "not-served", f"the host reports nothing about the {family} capability"
    if available is not True:
        return "not-served", f"the host reports {family} unavailable"
    serving = [p for p in providers if p.serves]
    if not serving:
        return (
            "served-degraded",
            f"the host reports {family} available but names no serving provider",
        )
    troubled = [
        p.id
        for p in providers
        if p.degraded
        or (p.lifecycle_state in UNHEALTHY_LIFECYCLE)
        or (p.state in UNHEALTHY_SERVER_STATE)
        or p.available is False
    ]
    if degraded or troubled:
        parts = [f"{d.reason} ({d.source})" for d in degraded[:5]]
        parts += [f"provider {pid} degraded or unavailable" for pid in troubled[:5]]
        return "served-degraded", f"{family} is available with degraded coverage: " + "; ".join(
            parts
        )
    ids = ", ".join(p.id for p in serving)
    return "served", f"{family} is available from {ids} via {mapping.outer_method}"


def coverage_map(
    names: Iterable[str],
    *,
    capabilities: Mapping[str, Any] | None,
    status: Mapping[str, Any] | None,
) -> tuple[CoverageItem, ...]:
    """Map each name and read the host's answer for it."""
    view = HostView(capabilities, status)
    return tuple(coverage_item(m, view) for m in map_names(list(names)))
