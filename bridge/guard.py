"""The one guard on the ordinary-tool forwarding path: no `gate` call-site, no write path, host methods only.

Every host call goes through `bridge.calls.call_host`, which asks `refusal()` first for tools
(`method_refusal()` for the extension's custom methods), so no tool — present or added later — can
send a `gate` call-site, and nothing can send `host/applyProposal`.
"""

from __future__ import annotations

from typing import Any

TOOL_CALL_SITES = frozenset({"interactive", "sweep"})
NEVER_FORWARDED = frozenset({"host/applyProposal"})


def _gate_paths(value: Any, path: str = "params") -> list[str]:
    """JSON paths of every `callSite` key whose value is not an ordinary-tool call-site."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}"
            if key == "callSite" and not (isinstance(item, str) and item in TOOL_CALL_SITES):
                found.append(here)
            found.extend(_gate_paths(item, here))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_gate_paths(item, f"{path}[{index}]"))
    return found


def method_refusal(method: str) -> str | None:
    """Why no MCP call — tool or extension method — may reach *method*, or None when one may."""
    if method in NEVER_FORWARDED:
        return f"{method} is never forwarded: the bridge has no write path"
    if not method.startswith("host/"):
        return (
            f"{method} is not an outer-seam host method; the bridge never offers provider methods"
        )
    return None


def refusal(method: str, params: Any, call_site: str | None) -> str | None:
    """Why an ordinary MCP tool may not forward this call, or None when it may."""
    by_method = method_refusal(method)
    if by_method is not None:
        return by_method
    if call_site is not None and call_site not in TOOL_CALL_SITES:
        return f"ordinary MCP tools cannot use call-site {call_site!r}; only interactive or sweep"
    bad = _gate_paths(params)
    if bad:
        return (
            f"ordinary MCP tools can only send call-site interactive or sweep (not so at {bad[0]})"
        )
    return None
