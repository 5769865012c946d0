"""The one call path from MCP to the host: guard, adapter policy, host call and error mapping.

Every host call the bridge makes for a client goes through `call_host` — the ordinary tools
(`BridgeRuntime.forward`), the extension's custom methods and the extension's tools. It never
raises for a host-side failure: it returns one `Outcome`, the verbatim host result or a labelled
`BridgeError` with the JSON-RPC code a custom method answers with. Labelling the outcome is the
caller's single step (`BridgeRuntime.answer` for tools, the extension's method answer), so every
result is labelled exactly once. See docs/architecture.md for the path of a tool call.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from asp_protocol.errors import RequestTimeout
from bridge import deadline, guard
from bridge.adapter_policy import AdapterPolicyGate, Surface, surface_of
from bridge.host_outcome import (
    HOST_FAILURES,
    REFUSED_CODE,
    ReportProgress,
    bridge_error,
    json_rpc_code,
    progress_sink,
)
from bridge.label import BridgeError
from bridge.listing import Listing
from host_client import HostClient
from host_client.observe import TraceEntry

log = logging.getLogger(__name__)

# "tool": an ordinary or extension tool (no `gate`, no apply, host methods only);
# "extension-method": a custom `asp/host/*` method, which forwards the client's call-site as is.
Guarding = Literal["tool", "extension-method"]


@dataclass
class Outcome:
    """What one call produced: the verbatim host result, or a labelled error and its JSON-RPC code."""

    method: str
    call_site: str | None
    latency_ms: float
    result: dict[str, Any] | None = None
    error: BridgeError | None = None
    code: int = 0

    @property
    def ok(self) -> bool:
        return self.result is not None


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def refused(
    method: str,
    call_site: str | None,
    message: str,
    started: float,
    fail_class: str | None = "policy",
) -> Outcome:
    """An outcome for a call the bridge does not make (policy, guard, a missing helper)."""
    error = BridgeError(reason="refused", message=message, fail_class=fail_class)
    return Outcome(method, call_site, _ms(started), error=error, code=REFUSED_CODE)


def _failed(method: str, call_site: str | None, started: float, exc: Exception) -> Outcome:
    """The outcome of a host failure, mapped once by `host_outcome` for tools and extension alike."""
    return Outcome(
        method, call_site, _ms(started), error=bridge_error(exc, method), code=json_rpc_code(exc)
    )


@dataclass
class CancellationRecord:
    """An MCP cancellation forwarded to the host, with whatever the host answered afterwards."""

    method: str
    call_site: str | None
    mcp_request_id: Any
    at: float
    entry: TraceEntry | None = None

    def to_dict(self) -> dict[str, Any]:
        entry = self.entry
        return {
            "method": self.method,
            "callSite": self.call_site,
            "mcpRequestId": self.mcp_request_id,
            "at": self.at,
            "hostRequestId": entry.request_id if entry else None,
            "cancelSent": entry.cancel_sent if entry else False,
            "hostReply": entry.late_reply if entry else None,
        }


@dataclass
class CancellationLog:
    """The last cancellations forwarded to the host (the host client's trace holds the details)."""

    records: deque[CancellationRecord] = field(default_factory=lambda: deque(maxlen=100))

    def add(self, record: CancellationRecord) -> None:
        self.records.append(record)

    def snapshot(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.records]


async def admit(
    client: HostClient,
    policy: AdapterPolicyGate,
    method: str,
    call_site: str | None,
    surface: Surface,
    started: float,
    *,
    start_host: bool = False,
) -> Outcome | None:
    """Start the host first when asked (the extension does, so a dead host is reported as such
    before any policy read), then apply the repository's `adapters.mcp`; None admits the call."""
    if start_host and client.state != "running":
        try:
            await client.start()
        except HOST_FAILURES as exc:
            return _failed(method, call_site, started, exc)
    reason = await policy.check(client, surface)
    return refused(method, call_site, reason, started) if reason is not None else None


async def call_host(
    client: HostClient,
    policy: AdapterPolicyGate,
    method: str,
    params: Any = None,
    *,
    call_site: str | None,
    origin: str,
    guarding: Guarding = "tool",
    surface: Surface | None = None,
    start_host: bool = False,
    report: ReportProgress | None = None,
    cancellations: CancellationLog | None = None,
    mcp_request_id: Any = None,
    session: str | None = None,
    listing: Listing | None = None,
    timeout: float | None = None,
) -> Outcome:
    """Guard, admit, call *method* with *params* unchanged and map any host failure.

    *surface* overrides the adapter-policy surface of *method* (a helper call made on behalf of
    an evaluate is admitted as evaluate). An MCP cancellation cancels the host call — the host
    client then sends `$/cancelRequest` — and is recorded in *cancellations* before it propagates.
    The request's budget (bridge/deadline.py) bounds the call and reaches the host as
    `timeoutMs`; *timeout* is the deadline outside a budgeted request. *listing* learns from the
    result (bridge/listing.py).
    """
    started = time.perf_counter()
    if guarding == "tool":
        reason = guard.refusal(method, params, call_site)
    else:
        reason = guard.method_refusal(method)
    if reason is not None:
        return refused(method, call_site, reason, started, fail_class=None)
    admitted = await admit(
        client,
        policy,
        method,
        call_site,
        surface or surface_of(method),
        started,
        start_host=start_host,
    )
    if admitted is not None:
        return admitted
    if deadline.expired():
        return _failed(method, call_site, started, RequestTimeout(method, 0.0))
    await deadline.say(report, f"{origin}: asking the ASP host ({method}{_at(call_site)})")
    try:
        result = await client.call(
            method,
            deadline.with_host_budget(method, params),
            call_site=call_site,
            origin=origin,
            timeout=deadline.host_timeout(timeout),
            on_progress=progress_sink(report),
            session=session,
        )
    except anyio.get_cancelled_exc_class():
        if cancellations is not None:
            entry = next((e for e in reversed(client.trace.entries()) if e.origin == origin), None)
            cancellations.add(
                CancellationRecord(method, call_site, mcp_request_id, time.time(), entry)
            )
            log.info("MCP cancelled %s (%s); $/cancelRequest sent to the host", method, origin)
        raise
    except HOST_FAILURES as exc:
        return Outcome(
            method,
            call_site,
            _ms(started),
            error=bridge_error(exc, method),
            code=json_rpc_code(exc),
        )
    policy.observe(result)
    if listing is not None:
        await listing.after(lambda: policy.check(client, "read"), method, result)
    return Outcome(method, call_site, _ms(started), result=result)


def _at(call_site: str | None) -> str:
    return f", call-site {call_site}" if call_site else ""
