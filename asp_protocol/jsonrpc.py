"""A JSON-RPC 2.0 endpoint over NDJSON byte streams: requests both ways on one pipe.

Modelled on pygls' protocol class: one object owns the read loop, id correlation, per-request
deadlines, `$/cancelRequest` in both directions, `$/progress` routing and failing every pending
request with a typed error when the stream closes.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Literal

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup

from asp_protocol import DEFAULT_MAX_LINE_BYTES
from asp_protocol.early import Early, EarlyLines
from asp_protocol.errors import (
    AspError,
    ConnectionClosed,
    ErrorCode,
    RequestTimeout,
)
from asp_protocol.framing import (
    LineReader,
    OversizedLine,
    UnencodableMessage,
    encode_message,
    encode_result,
)
from asp_protocol.handling import close_prepared, logged_call, prepared_input, run_handler
from asp_protocol.pipes import LoopReceiveStream
from asp_protocol.replies import reply_error_code, settle
from asp_protocol.rpc_types import (
    CANCEL_METHOD,
    PROGRESS_METHOD,
    BadMessage,
    Inflight,
    NotificationHandler,
    Pending,
    Prepare,
    ProgressCallback,
    Registration,
    RequestContext,
    RequestHandler,
    RequestId,
    WireEvent,
    decode_message,
    fail_oversized_reply,
    is_request_id,
    unencodable_result,
)

log = logging.getLogger(__name__)

__all__ = [
    "CANCEL_METHOD",
    "PROGRESS_METHOD",
    "JsonRpcEndpoint",
    "NotificationHandler",
    "ProgressCallback",
    "RequestContext",
    "RequestHandler",
    "RequestId",
    "WireEvent",
]


class JsonRpcEndpoint:
    """One side of a JSON-RPC 2.0 NDJSON connection; call `serve()` in a task group."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        *,
        name: str = "peer",
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        on_wire: Callable[[WireEvent], None] | None = None,
        drain_seconds: float = 5.0,
    ) -> None:
        self.name = name
        self._drain_seconds = drain_seconds
        self._idle = anyio.Event()
        self._idle.set()
        self._reader = LineReader(receive, max_line_bytes)
        self._send_stream = send
        self._send_lock = anyio.Lock(fast_acquire=True)  # no extra loop turn when it is free
        self._ids = itertools.count(1)
        self._handlers: dict[str, Registration] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._pending: dict[RequestId, Pending] = {}
        self._inflight: dict[RequestId, Inflight] = {}
        self._on_wire = on_wire
        self._closed = False
        self._receiving_done = False
        self._close_reason = "connection closed"
        self.closed_event = anyio.Event()
        self._early = EarlyLines(
            name, self._reader, self._pending, self._inflight, self._handlers, self._on_response
        )
        if isinstance(receive, LoopReceiveStream):
            receive.offer_first(self._early.take)

    # -- registration -------------------------------------------------------------------------

    def register(
        self,
        method: str,
        handler: RequestHandler,
        *,
        cooperative_cancel: bool = False,
        prepare: Prepare | None = None,
    ) -> None:
        """Serve *method*. A cooperative handler is told of `$/cancelRequest` instead of being
        cancelled. With *prepare*, `prepare(params)` runs as the request is read and its value
        is the handler's input (handling.py says when it is closed)."""
        self._handlers[method] = Registration(handler, cooperative_cancel, prepare)
        self._early.prepares = self._early.prepares or prepare is not None

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        self._notification_handlers[method] = handler

    @property
    def closed(self) -> bool:
        return self._closed

    # -- outgoing -----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Send a request and wait for its result; raises AspError, RequestTimeout or ConnectionClosed."""
        if self._closed or self._receiving_done:
            raise ConnectionClosed(f"{self.name}: {self._close_reason}")
        request_id = next(self._ids)
        pending = Pending(method, on_progress)
        self._pending[request_id] = pending
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message, "request", method, request_id)
            if not await pending.answered(timeout):
                await self._cancel_remote(request_id)
                raise RequestTimeout(method, timeout or 0)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel_remote(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message, "notification", method, None)

    async def _cancel_remote(self, request_id: RequestId) -> None:
        if self._closed:
            return
        with suppress(ConnectionClosed):
            await self.notify(CANCEL_METHOD, {"id": request_id})

    async def _send(
        self,
        message: dict[str, Any] | bytes,
        kind: Literal["request", "response", "error", "notification", "invalid"],
        method: str | None,
        request_id: RequestId | None,
    ) -> None:
        data = message if isinstance(message, bytes) else encode_message(message)
        async with self._send_lock:
            if self._closed and kind != "response" and kind != "error":
                raise ConnectionClosed(f"{self.name}: {self._close_reason}")
            try:
                await self._send_stream.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                self._mark_closed(f"write failed: {exc.__class__.__name__}")
                raise ConnectionClosed(f"{self.name}: {self._close_reason}") from exc
        self._trace("out", kind, method, request_id, len(data))

    async def _respond(self, request_id: RequestId | None, result: Any) -> None:
        with suppress(ConnectionClosed):
            try:
                await self._send(encode_result(request_id, result), "response", None, request_id)
            except UnencodableMessage as exc:  # still answered: typed, saying why
                await self._respond_error(request_id, unencodable_result(self.name, exc))

    async def _respond_error(self, request_id: RequestId | None, error: AspError) -> None:
        message = {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}
        with suppress(ConnectionClosed):
            await self._send(message, "error", None, request_id)

    # -- incoming -----------------------------------------------------------------------------

    async def serve(self) -> None:
        """Read and dispatch until the stream ends; then fail every pending request.

        Requests already received when the stream ends still get their answers (for up to
        `drain_seconds`), so `printf '...' | host serve` works like a long-lived session.
        """
        try:
            async with anyio.create_task_group() as tg:
                try:
                    while True:
                        line = await self._reader.next_line()
                        if line is None:
                            break
                        await self._dispatch_line(line, tg)
                    self._fail_pending("peer closed the stream")
                    with anyio.move_on_after(self._drain_seconds):
                        await self._idle.wait()
                finally:
                    self._mark_closed("peer closed the stream")
                    tg.cancel_scope.cancel()
        finally:
            self._mark_closed("peer closed the stream")
            self._early.close_all()

    def _fail_pending(self, reason: str) -> None:
        """No more responses can arrive: fail what waits, and refuse new requests from now on."""
        self._receiving_done = True
        self._close_reason = reason
        for pending in self._pending.values():
            if not pending.done.is_set():
                pending.error = ConnectionClosed(f"{self.name}: {reason}")
                pending.done.set()

    def _mark_closed(self, reason: str) -> None:
        if self._closed:
            return
        self._fail_pending(reason)
        self._closed = True
        self.closed_event.set()

    async def _dispatch_line(self, line: bytes | OversizedLine, tg: TaskGroup) -> None:
        early = self._early.claim(line) if isinstance(line, bytes) else None
        try:
            message, size = (early.message, early.size) if early else decode_message(line)
        except BadMessage as bad:
            self._trace("in", "invalid", None, None, bad.size)
            if not (isinstance(line, OversizedLine) and fail_oversized_reply(self._pending, line)):
                await self._respond_error(bad.request_id, bad.error)  # else the call failed at once
            return
        method = message.get("method")
        has_id = "id" in message
        if isinstance(method, str):
            if has_id:
                try:
                    await self._on_request(message, method, size, tg, early)
                finally:  # prepared in the read callback but refused here (a duplicate id)
                    self._early.close_unused(early)
            else:
                self._trace("in", "notification", method, None, size)
                await self._on_notification(method, message.get("params"), tg)
        elif has_id and ("result" in message or "error" in message):
            self._on_response(message, size)
        else:
            self._trace("in", "invalid", None, None, size)
            await self._respond_error(
                None, AspError(ErrorCode.INVALID_REQUEST, "neither request nor response")
            )

    async def _on_request(
        self, message: dict[str, Any], method: str, size: int, tg: TaskGroup, early: Early | None
    ) -> None:
        request_id = message["id"]
        self._trace(
            "in",
            "request",
            method,
            request_id if is_request_id(request_id) else None,
            size,
        )
        if not is_request_id(request_id):
            await self._respond_error(
                None, AspError(ErrorCode.INVALID_REQUEST, "request id must be a string or integer")
            )
            return
        if request_id in self._inflight:
            await self._respond_error(
                request_id,
                AspError(
                    ErrorCode.INVALID_REQUEST, "duplicate request id while the first is in flight"
                ),
            )
            return
        registration = self._handlers.get(method)
        if registration is None:
            await self._respond_error(
                request_id,
                AspError(ErrorCode.METHOD_NOT_FOUND, "method not found", detail=method[:200]),
            )
            return
        params, refused = message.get("params"), None
        if early is not None and early.prepared:  # prepared in the read callback (early.py)
            params, refused, early.prepared = early.params, early.refused, False
        elif registration.prepare is not None:  # first: before the task's first turn
            params, refused = prepared_input(self.name, method, registration.prepare, params)
        context = RequestContext(request_id, method, self)
        inflight = Inflight(anyio.CancelScope(), context, registration.cooperative_cancel)
        inflight.prepared = params if registration.prepare is not None else None
        self._inflight[request_id] = inflight
        if self._idle.is_set():
            self._idle = anyio.Event()
        tg.start_soon(self._run_handler, registration.handler, params, inflight, refused)

    async def _run_handler(
        self, handler: RequestHandler, params: Any, inflight: Inflight, refused: AspError | None
    ) -> None:
        request_id = inflight.context.id
        started = time.perf_counter()
        try:
            if refused is None:
                outcome = await run_handler(self.name, handler, params, inflight)
            else:
                outcome = refused
            close_prepared(inflight)
            # The id is free before the answer leaves: a peer that reuses it on receipt of the
            # answer must not meet "duplicate request id while the first is in flight".
            self._inflight.pop(request_id, None)
            if isinstance(outcome, AspError):
                await self._respond_error(request_id, outcome)
            elif outcome is not None:
                await self._respond(request_id, outcome[0])
        except ConnectionClosed:
            pass
        finally:
            close_prepared(inflight)
            self._inflight.pop(request_id, None)
            if not self._inflight:
                self._idle.set()
            log.debug(
                "%s: %s took %.1f ms",
                self.name,
                inflight.context.method,
                (time.perf_counter() - started) * 1000,
            )

    async def _on_notification(self, method: str, params: Any, tg: TaskGroup) -> None:
        if method == CANCEL_METHOD:
            target = params.get("id") if isinstance(params, dict) else None
            inflight = self._inflight.get(target) if is_request_id(target) else None
            if inflight is not None:
                inflight.context.cancel_requested.set()
                if not inflight.cooperative_cancel:
                    inflight.scope.cancel()
            return
        if method == PROGRESS_METHOD:
            token = params.get("token") if isinstance(params, dict) else None
            pending = self._pending.get(token) if is_request_id(token) else None
            if pending is not None and pending.on_progress is not None:
                what = f"{self.name}: progress callback"
                tg.start_soon(logged_call, what, pending.on_progress, params.get("value"))
            return
        handler = self._notification_handlers.get(method)
        if handler is not None:
            tg.start_soon(logged_call, f"{self.name}: notification handler", handler, params)

    def _on_response(self, message: dict[str, Any], size: int) -> None:
        request_id = message.get("id")
        kind: Literal["error", "response"] = "error" if "error" in message else "response"
        self._trace("in", kind, None, request_id, size, reply_error_code(message))
        pending = self._pending.get(request_id) if is_request_id(request_id) else None
        if pending is None or pending.done.is_set():
            log.debug("%s: response for unknown request id %r dropped", self.name, request_id)
            return
        settle(pending, message)

    def _trace(
        self,
        direction: Literal["in", "out"],
        kind: Literal["request", "response", "error", "notification", "invalid"],
        method: str | None,
        request_id: RequestId | None,
        size: int,
        error_code: int | None = None,
    ) -> None:
        if self._on_wire is not None:
            self._on_wire(
                WireEvent(direction, kind, method, request_id, size, time.time(), error_code)
            )
