"""One forwarding path for the extension: call the host, map failures, keep progress and cancels.

Methods and tools both come through `forward`; it returns the host's result verbatim or a
`label.BridgeError` with the JSON-RPC code a custom method answers with. MCP cancellation cancels
the host call, which sends `$/cancelRequest`; the host client's trace entry (found by its unique
origin) records the host's late answer, and `CancellationLog` keeps that record.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import anyio

from asp_protocol.errors import AspError, ErrorCode, RequestTimeout
from bridge import label
from bridge.host_outcome import HOST_FAILURES, ReportProgress, bridge_error, progress_sink
from host_client import HostClient, HostUnavailable
from host_client.observe import TraceEntry

log = logging.getLogger(__name__)


# JSON-RPC codes a custom method answers with when there is no host error code to pass on.
REFUSED_CODE = ErrorCode.SCOPE_DENIED.value.code  # -32012, failClass policy
TIMEOUT_CODE = -32001  # MCP REQUEST_TIMEOUT
UNAVAILABLE_CODE = ErrorCode.HEALTH_NOT_READY.value.code  # -32010, failClass health
PROTOCOL_CODE = ErrorCode.INTERNAL_ERROR.value.code  # -32603


@dataclass
class Forwarded:
    """What came back: the verbatim host result, or a labelled error and its JSON-RPC code."""

    latency_ms: float
    result: dict[str, Any] | None = None
    error: label.BridgeError | None = None
    code: int = 0


def refused(message: str, started: float) -> Forwarded:
    error = label.BridgeError(reason="refused", message=message, failClass="policy")
    return Forwarded(_ms(started), error=error, code=REFUSED_CODE)


def _json_rpc_code(exc: Exception) -> int:
    """The code a custom method answers with: the host's own ASP code when it sent one."""
    if isinstance(exc, AspError):
        return exc.code
    if isinstance(exc, RequestTimeout):
        return TIMEOUT_CODE
    if isinstance(exc, HostUnavailable):
        return UNAVAILABLE_CODE
    return PROTOCOL_CODE


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


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
    """The last cancellations the extension forwarded (the host client trace holds the details)."""

    records: deque[CancellationRecord] = field(default_factory=lambda: deque(maxlen=100))

    def add(self, record: CancellationRecord) -> None:
        self.records.append(record)

    def snapshot(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.records]


async def forward(
    client: HostClient,
    method: str,
    params: Any,
    *,
    call_site: str | None,
    origin: str,
    report: ReportProgress | None,
    cancellations: CancellationLog,
    mcp_request_id: Any = None,
) -> Forwarded:
    """Call *method* on the host with *params* unchanged; never raises for host-side failures."""
    started = time.perf_counter()
    try:
        result = await client.call(
            method, params, call_site=call_site, origin=origin, on_progress=progress_sink(report)
        )
    except anyio.get_cancelled_exc_class():
        entry = next((e for e in reversed(client.trace.entries()) if e.origin == origin), None)
        cancellations.add(CancellationRecord(method, call_site, mcp_request_id, time.time(), entry))
        log.info("MCP cancelled %s (%s); $/cancelRequest sent to the host", method, origin)
        raise
    except HOST_FAILURES as exc:
        error = bridge_error(exc, method)
        return Forwarded(_ms(started), error=error, code=_json_rpc_code(exc))
    return Forwarded(_ms(started), result=result)
