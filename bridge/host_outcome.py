"""How a host call's failure and progress are presented over MCP — one mapping for tools and the extension."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asp_protocol.errors import AspError, ErrorCode, RequestTimeout
from bridge import deadline, label
from bridge.fence import cap_string, clean_text
from host_client import HostProtocolError, HostUnavailable

ReportProgress = Callable[[float, float | None, str | None], Awaitable[None]]
ProgressSink = Callable[[Any], Awaitable[None]]

HOST_FAILURES: tuple[type[Exception], ...] = (
    AspError,
    RequestTimeout,
    HostUnavailable,
    HostProtocolError,
)


# JSON-RPC codes a custom method answers with when there is no host error code to pass on.
REFUSED_CODE = ErrorCode.SCOPE_DENIED.value.code  # -32012, failClass policy
TIMEOUT_CODE = -32001  # MCP REQUEST_TIMEOUT
UNAVAILABLE_CODE = ErrorCode.HEALTH_NOT_READY.value.code  # -32010, failClass health
PROTOCOL_CODE = ErrorCode.INTERNAL_ERROR.value.code  # -32603


def json_rpc_code(exc: Exception) -> int:
    """The code a custom method answers with for one of HOST_FAILURES: the host's own when it sent one."""
    if isinstance(exc, AspError):
        return exc.code
    if isinstance(exc, RequestTimeout):
        return TIMEOUT_CODE
    if isinstance(exc, HostUnavailable):
        return UNAVAILABLE_CODE
    return PROTOCOL_CODE


def bridge_error(exc: Exception, method: str) -> label.BridgeError:
    """The labelled reason for one of HOST_FAILURES: never an empty success, always machine-readable."""
    if isinstance(exc, AspError):
        return label.BridgeError(
            reason="host-error",
            message=exc.message,
            code=exc.code,
            fail_class=exc.fail_class,
            retryable=exc.retryable,
            detail=exc.detail,
        )
    if isinstance(exc, RequestTimeout):
        return label.BridgeError(
            reason="timeout",
            message=f"the host did not answer {method} within {exc.timeout:g} s; "
            "the request was cancelled with $/cancelRequest",
        )
    if isinstance(exc, HostUnavailable):
        return label.BridgeError(
            reason="host-unavailable",
            message=exc.reason
            + (" (permanent until the bridge restarts)" if exc.permanent else ""),
            fail_class="health",
            exit_code=exc.exit_code,
            stderr_tail=exc.stderr_tail or None,
        )
    if isinstance(exc, HostProtocolError):
        return label.BridgeError(
            reason="host-protocol-error",
            message="the host's reply breaks the outer-seam contract",
            detail=exc.detail,
        )
    raise TypeError(f"not a host failure: {exc!r}")


def progress_sink(report: ReportProgress | None) -> ProgressSink | None:
    """Host `$/progress` → MCP progress; host text is untrusted, so it is cleaned and capped."""
    if report is None:
        return None
    count = 0

    budget = deadline.current()  # one counter per MCP request: progress values only grow

    async def sink(value: Any) -> None:
        nonlocal count
        count = budget.next_progress() if budget is not None else count + 1
        message = value.get("message") if isinstance(value, dict) else None
        total = value.get("total") if isinstance(value, dict) else None
        text = None
        if isinstance(message, str):
            text = "host progress (untrusted): " + cap_string(clean_text(message), 200)
        numeric_total = (
            float(total)
            if isinstance(total, int | float) and total >= count and budget is None
            else None
        )
        await report(count, numeric_total, text)

    return sink
