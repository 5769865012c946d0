"""A few readable lines over a status-family host result, so a person or model need not parse JSON.

Every value comes from the host and is untrusted: each is cleaned and capped here, and the caller
fences the whole summary. A field the host left out or mistyped is shown as `?`, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bridge.fence import cap_string, clean_text

Summarizer = Callable[[dict[str, Any]], str]
_CAP = 80
NOT_STARTED = "not started yet (starts on first use)"


def _s(value: Any) -> str:
    """One host value as a short, single-line string."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str | int | float):
        return cap_string(clean_text(str(value)).replace("\n", " "), _CAP)
    return "?"


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _names(values: Any) -> str:
    return ", ".join(_s(v) for v in _items(values)[:10]) or "none"


def _reasons(degraded: Any) -> str:
    entries = [_d(d) for d in _items(degraded)]
    return "; ".join(f"{_s(d.get('source'))}: {_s(d.get('reason'))}" for d in entries[:5])


def lifecycle_words(state: Any, lifecycle: Any) -> str:
    """A provider's state in words: `installed` + `exited` means it was never launched (providers
    start lazily), which people read as a crash when shown as `exited`."""
    if state == "installed" and lifecycle in ("exited", None):
        return NOT_STARTED
    if state is None:
        return _s(lifecycle) if lifecycle is not None else "?"
    return f"{_s(state)}/{_s(lifecycle)}" if lifecycle is not None else _s(state)


def _provider_line(server: dict[str, Any]) -> str:
    authority = _d(_d(server.get("authorityEvidence")).get("authority"))
    granted = authority.get("granted")
    return (
        f"- {_s(server.get('id'))} [{_names(server.get('capabilities'))}] "
        f"{lifecycle_words(server.get('state'), server.get('lifecycleState'))}, "
        f"role {_s(server.get('role', '?'))}, enrollment {_s(server.get('enrollmentState', '?'))}, "
        f"authority {'granted' if granted is True else 'not granted'}"
    )


def status_summary(result: dict[str, Any]) -> str:
    host, workspace, policy = (
        _d(result.get("host")),
        _d(result.get("workspace")),
        _d(result.get("policy")),
    )
    baseline = _d(workspace.get("baseline"))
    lines = [
        f"Host {_s(host.get('name'))} {_s(host.get('version'))}: {_s(host.get('state'))} "
        f"(binding {_s(host.get('bindingCandidate'))}, outer protocol {_s(host.get('outerProtocol'))})",
        f"Workspace {_s(workspace.get('root'))} at baseline {_s(baseline.get('rev'))}"
        + (" with uncommitted changes" if baseline.get("dirty") else ""),
        f"Policy {_s(policy.get('source'))}: {_s(policy.get('activation'))}, "
        f"digest {_s(policy.get('policyDigest'))}",
        f"Assurance the host can achieve: {_names(result.get('assuranceCapabilities'))}",
        "Gates per call-site:",
    ]
    for site, gate in _d(result.get("gates")).items():
        gate = _d(gate)
        degraded = _reasons(gate.get("degraded"))
        lines.append(
            f"- {_s(site)}: {'available' if gate.get('available') is True else 'NOT available'}, "
            f"requires {_names(gate.get('requiredProviders'))}"
            + (f"; degraded: {degraded}" if degraded else "")
        )
    lines.append("Providers:")
    lines += [_provider_line(_d(s)) for s in _items(result.get("servers"))[:20]]
    return "\n".join(lines)


def capabilities_summary(result: dict[str, Any]) -> str:
    lines = ["Capabilities the host composes (after policy, health and authority):"]
    for family, status in _d(result.get("capabilities")).items():
        status = _d(status)
        degraded = _reasons(status.get("degraded"))
        lines.append(
            f"- {_s(family)}: {'available' if status.get('available') is True else 'unavailable'}, "
            f"providers {_names(status.get('providers'))}, "
            f"required at {_names(status.get('requiredFor'))}"
            + (f"; degraded: {degraded}" if degraded else "")
        )
    coverage = _d(result.get("coverage"))
    lines.append(
        f"Coverage: required {_names(coverage.get('required'))}; ran {_names(coverage.get('ran'))}"
    )
    return "\n".join(lines)


def authority_summary(result: dict[str, Any]) -> str:
    lines = [
        f"Policy activation {_s(result.get('policyActivation'))}, "
        f"digest {_s(result.get('policyDigest'))}",
        "Providers (authority comes only from policy pins, never from a manifest):",
    ]
    for server in _items(result.get("providers"))[:20]:
        server = _d(server)
        evidence = _d(server.get("authorityEvidence"))
        authority = _d(evidence.get("authority"))
        lines.append(
            f"- {_s(server.get('id'))}: identity {_s(evidence.get('identity'))}, "
            f"conformance {_s(evidence.get('conformance'))}, isolation "
            f"{_s(evidence.get('isolation'))}, authority for {_s(authority.get('requirement'))}: "
            f"{'granted' if authority.get('granted') is True else 'NOT granted'}"
        )
    return "\n".join(lines)


def evaluated_paths_line(changeset: Any, result: dict[str, Any]) -> str:
    """How many paths an evaluation covered: the ChangeSet's paths minus those the host listed as
    analysed by no required provider (`coverage.degraded`, reason `unsupported`, source = path)."""
    paths = list(
        dict.fromkeys(
            c["path"]
            for c in _items(_d(changeset).get("changes"))
            if isinstance(_d(c).get("path"), str)
        )
    )
    if not paths:
        return "Paths evaluated: 0 (the ChangeSet is empty; nothing was checked)."
    listed = {
        _d(d).get("source")
        for d in _items(_d(result.get("coverage")).get("degraded"))
        if _d(d).get("reason") == "unsupported"
    }
    missing = [p for p in paths if p in listed]
    line = f"Paths evaluated: {len(paths) - len(missing)} of {len(paths)} changed"
    if missing:
        line += f"; analysed by no required provider: {_names(missing)}"
        line += f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""
    return line + "."
