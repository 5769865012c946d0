"""The message-level vocabulary of the JSON-RPC endpoint: ids, handler and callback types, the
context a request handler gets, the per-request bookkeeping records and the wire trace event.

Kept apart from `jsonrpc.py` (the endpoint's read loop and correlation) so the data the endpoint
passes around is readable on its own; `jsonrpc` re-exports the public names.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeGuard

import anyio

from asp_protocol.canonical import strict_loads
from asp_protocol.errors import AspError, ErrorCode, ProtocolViolation
from asp_protocol.framing import OversizedLine, UnencodableMessage

if TYPE_CHECKING:
    from asp_protocol.jsonrpc import JsonRpcEndpoint

CANCEL_METHOD = "$/cancelRequest"
PROGRESS_METHOD = "$/progress"

RequestId = int | str
ProgressCallback = Callable[[Any], Awaitable[None]]
NotificationHandler = Callable[[Any], Awaitable[None]]


def is_request_id(value: Any) -> TypeGuard[RequestId]:
    """A JSON-RPC id: a string or an integer — never a boolean, which Python would equate with 0/1."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


@dataclass
class RequestContext:
    """What a request handler knows about its request; `cancel_requested` is set by `$/cancelRequest`."""

    id: RequestId
    method: str
    endpoint: JsonRpcEndpoint
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    async def progress(self, value: dict[str, Any]) -> None:
        """Send `$/progress` with this request's id as the token."""
        await self.endpoint.notify(PROGRESS_METHOD, {"token": self.id, "value": value})


RequestHandler = Callable[[Any, RequestContext], Awaitable[Any]]


class Prepared(Protocol):
    """What a `prepare` step returns (`handling.py`): the handler's input, closed at the end."""

    def close(self) -> None: ...


Prepare = Callable[[Any], Prepared]


@dataclass
class Registration:
    handler: RequestHandler
    cooperative_cancel: bool
    prepare: Prepare | None = None


@dataclass
class Inflight:
    scope: anyio.CancelScope
    context: RequestContext
    cooperative_cancel: bool
    prepared: Prepared | None = None


@dataclass
class Pending:
    method: str
    on_progress: ProgressCallback | None
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: BaseException | None = None
    expired: bool = False  # the caller's deadline passed before an answer came

    def expire(self) -> None:
        """The deadline passed: wake the waiter unless the answer is already in."""
        if not self.done.is_set():
            self.expired = True
            self.done.set()

    async def answered(self, timeout: float | None) -> bool:
        """Wait for the answer; False when *timeout* seconds passed first.

        On asyncio the deadline is a loop timer that wakes the waiter, which costs a few
        microseconds per request where a cancel scope (`fail_after`) costs several times that on
        every call; elsewhere it is `anyio.move_on_after`."""
        if timeout is None:
            await self.done.wait()
            return True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another anyio backend
            with anyio.move_on_after(timeout):
                await self.done.wait()
            return self.done.is_set()
        timer = loop.call_later(max(timeout, 0.0), self.expire)
        try:
            await self.done.wait()
        finally:
            timer.cancel()
        return not self.expired


@dataclass(frozen=True)
class WireEvent:
    """One message seen on the wire, for tracing and debug tools (never holds the payload)."""

    direction: Literal["in", "out"]
    kind: Literal["request", "response", "error", "notification", "invalid"]
    method: str | None
    id: RequestId | None
    size: int
    at: float
    error_code: int | None = None


class BadMessage(Exception):
    """A line that is not a JSON-RPC 2.0 message: the error to answer with, and the id if any."""

    def __init__(self, error: AspError, size: int, request_id: RequestId | None = None) -> None:
        super().__init__(error.message)
        self.error, self.size, self.request_id = error, size, request_id


_ID_IN_HEAD = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,19})')


def fail_oversized_reply(pending: dict[RequestId, Pending], line: OversizedLine) -> bool:
    """An over-limit answer to one of our requests fails that call now, not at its deadline."""
    request_id = head_id(line)
    waiting = pending.get(request_id) if request_id is not None else None
    if waiting is None or waiting.done.is_set():
        return False
    waiting.error = ProtocolViolation(f"response line of {line.size} bytes exceeds the line limit")
    waiting.done.set()
    return True


def unencodable_result(endpoint: str, exc: UnencodableMessage) -> AspError:
    """What a peer gets instead of a handler result that has no JSON text (a lone surrogate, a
    value JSON cannot hold): an answer all the same, so its request never waits out a deadline."""
    logging.getLogger("asp_protocol.jsonrpc").error("%s: result not encodable: %s", endpoint, exc)
    return AspError(
        ErrorCode.INTERNAL_ERROR, "internal error", detail="the result has no JSON text"
    )


def head_id(line: OversizedLine) -> RequestId | None:
    """The id an oversized line's head names (its first `"id":`), or None."""
    found = _ID_IN_HEAD.search(line.head)
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def decode_message(line: bytes | OversizedLine) -> tuple[dict[str, Any], int]:
    """One NDJSON line as a JSON-RPC 2.0 object and its size, or `BadMessage` (-32700 / -32600)."""
    if isinstance(line, OversizedLine):
        error = AspError(
            ErrorCode.PARSE_ERROR, "line exceeds the size limit", detail=f"{line.size} bytes"
        )
        raise BadMessage(error, line.size)
    try:
        message = strict_loads(line)  # NaN/Infinity: an unparseable line
    except (ValueError, UnicodeDecodeError, RecursionError):
        # RecursionError: nesting deeper than the interpreter can parse is a bad line too
        raise BadMessage(
            AspError(ErrorCode.PARSE_ERROR, "unparseable JSON line"), len(line)
        ) from None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        bad_id = message.get("id") if isinstance(message, dict) else None
        raise BadMessage(
            AspError(ErrorCode.INVALID_REQUEST, "not a JSON-RPC 2.0 object"),
            len(line),
            bad_id if isinstance(bad_id, (int, str)) else None,
        )
    return message, len(line)
