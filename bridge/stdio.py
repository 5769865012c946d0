"""The bridge's stdio transport: the pipes read and written on the event loop, handed to the SDK.

The SDK's own `stdio_server` moves every line in and out through worker threads (anyio file
wrappers); on a 2-core machine that thread hop is most of the bridge's per-call cost. Here the
process's stdin and stdout pipes are attached to the asyncio loop (`connect_read_pipe` /
`connect_write_pipe`), complete lines are parsed once and handed to the SDK server as its read
stream, and each outgoing message is serialized once, straight to bytes. The streams are not
memory streams fed by tasks of their own: a read parses the next line in the task that reads, a
send writes in the task that sends, so a message costs no extra task switch on either side. The SDK (`mcp`) stays the
MCP implementation: only the transport below its streams is ours.

Every bad line gets a typed JSON-RPC answer instead of silence, and the server keeps serving:
unparseable JSON, nesting or lone surrogates the parser cannot take → -32700 (id null); an object
that is not a JSON-RPC message → -32600; `params` that is not an object → -32602 with the id; a
line over the request limit → -32600 at once, `data.reason: refused`, with the id when its head
carries one. Like the SDK's transport, fds 0 and 1 are diverted (to /dev/null and stderr) while
serving, so nothing else in the process can write onto the wire. When stdin or stdout is not a
pipe or socket (a file, a terminal), or `ASP_MCP_STDIO_SDK=1` is set, the SDK's transport is used
unchanged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from asp_protocol.framing import HEAD_BYTES, OversizedLine
from asp_protocol.pipes import PipeWriter, pollable
from asp_protocol.rpc_types import head_id

log = logging.getLogger(__name__)

MAX_REQUEST_LINE_BYTES = 16 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
_QUEUED_LINES = 64  # stop reading the pipe while this many lines wait for the server


def _error(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = {"jsonrpc": "2.0", "id": request_id, "error": error}
    return json.dumps(body, ensure_ascii=True).encode("ascii") + b"\n"


def _request_id(value: Any) -> Any:
    """A usable JSON-RPC id, or None (booleans are never ids)."""
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def classify(line: bytes) -> SessionMessage | bytes:
    """The SDK message a line carries, or the bytes of the typed error answering it."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _answer_invalid(line, exc)
    return SessionMessage(message)


def _answer_invalid(line: bytes, exc: ValidationError) -> bytes:
    if any(e["type"] == "json_invalid" for e in exc.errors()):
        return _error(
            None,
            PARSE_ERROR,
            "Parse error: not JSON the bridge can take (syntax, nesting or surrogates)",
        )
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "Parse error: not JSON the bridge can take")
    if not isinstance(value, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a JSON-RPC message is an object")
    request_id = _request_id(value.get("id"))
    is_request = value.get("jsonrpc") == "2.0" and isinstance(value.get("method"), str)
    if is_request and "params" in value and not isinstance(value["params"], dict):
        return _error(request_id, INVALID_PARAMS, "Invalid params: params must be an object")
    return _error(request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")


def oversized(head: bytes, size: int, limit: int) -> bytes:
    """The answer to a request line over *limit*: refused at once, never waited out."""
    request_id = head_id(OversizedLine(size, head))
    message = f"refused: request line of {size} bytes exceeds the bridge limit of {limit} bytes"
    return _error(request_id, INVALID_REQUEST, message, {"reason": "refused", "limitBytes": limit})


class _LineReader(asyncio.Protocol):
    """Splits the incoming bytes into lines; an over-limit line is dropped, its head kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buffer = bytearray()
        self.lines: deque[bytes | tuple[bytes, int]] = deque()
        self.ready = asyncio.Event()
        self.eof = False
        self.transport: asyncio.ReadTransport | None = None
        self._skipping: tuple[bytes, int] | None = None  # head and size of an over-limit line

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._partial(data[start:])
                break
            self._partial(data[start:end])
            self._complete()
            start = end + 1
        if len(self.lines) >= _QUEUED_LINES and self.transport is not None:
            self.transport.pause_reading()
        self.ready.set()

    def _partial(self, chunk: bytes) -> None:
        if self._skipping is not None:
            head, size = self._skipping
            self._skipping = (head, size + len(chunk))
        elif len(self.buffer) + len(chunk) > self.limit:
            head = bytes(self.buffer[:HEAD_BYTES] + chunk[: max(0, HEAD_BYTES - len(self.buffer))])
            self._skipping = (head, len(self.buffer) + len(chunk))
            self.buffer.clear()
        else:
            self.buffer += chunk

    def _complete(self) -> None:
        if self._skipping is not None:
            self.lines.append(self._skipping)
            self._skipping = None
        elif self.buffer.strip():
            self.lines.append(bytes(self.buffer))
        self.buffer.clear()

    def eof_received(self) -> bool:
        self.eof = True
        self.ready.set()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.ready.set()

    async def next(self) -> bytes | tuple[bytes, int] | None:
        """The next line (or an over-limit line's head and size); None at end of input."""
        while not self.lines:
            if self.eof:
                return None
            self.ready.clear()
            await self.ready.wait()
        line = self.lines.popleft()
        if len(self.lines) < _QUEUED_LINES // 2 and self.transport is not None:
            with suppress(RuntimeError):
                self.transport.resume_reading()
        return line


def usable() -> bool:
    """Whether this transport can serve: both stdin and stdout are pipes or sockets."""
    return pollable(0) and pollable(1) and os.environ.get("ASP_MCP_STDIO_SDK") != "1"


def _divert() -> tuple[int, int, Callable[[], None]]:
    """Private duplicates of fds 0 and 1; the originals point at /dev/null and stderr meanwhile."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        with suppress(OSError):
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)

    return wire_in, wire_out, restore


class WireReads(ObjectReceiveStream[SessionMessage | Exception]):
    """The SDK server's read stream: each `receive` takes the next complete line off stdin and
    parses it, in the task that asks (no relay task, no hand-off through a memory stream); a bad
    line is answered at once and the next one read."""

    def __init__(self, reader: _LineReader, answer: Callable[[bytes], Awaitable[None]]) -> None:
        self._reader, self._answer = reader, answer

    async def receive(self) -> SessionMessage | Exception:
        while (item := await self._reader.next()) is not None:
            if isinstance(item, tuple):
                await self._answer(oversized(item[0], item[1], self._reader.limit))
                continue
            parsed = classify(item)
            if isinstance(parsed, bytes):
                log.warning("answered a bad input line: %s", parsed[:200].decode("ascii"))
                await self._answer(parsed)
                continue
            return parsed
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        return None  # the pipes are loop_stdio's to close, once the server is done


class WireWrites(ObjectSendStream[SessionMessage]):
    """The SDK server's write stream: each message is serialized once and written to stdout by
    the task that sends it; a send waits only while the pipe is full."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        self._send = send
        self._closed = False

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        message = item.message
        data = message.__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)
        await self._send(data + b"\n")

    async def aclose(self) -> None:
        self._closed = True


@asynccontextmanager
async def loop_stdio(
    limit: int = MAX_REQUEST_LINE_BYTES,
) -> AsyncIterator[tuple[WireReads, WireWrites]]:
    """The (read, write) streams of an SDK server, reading stdin and writing stdout directly."""
    wire_in, wire_out, restore = _divert()
    reader = _LineReader(limit)
    writer = PipeWriter()
    loop = asyncio.get_running_loop()
    read_transport, _ = await loop.connect_read_pipe(
        lambda: reader, os.fdopen(wire_in, "rb", buffering=0)
    )
    write_transport, _ = await loop.connect_write_pipe(
        lambda: writer, os.fdopen(wire_out, "wb", buffering=0)
    )

    async def send(data: bytes) -> None:
        if writer.lost:
            return
        write_transport.write(data)
        await writer.drain()

    try:
        yield WireReads(reader, send), WireWrites(send)
        with anyio.move_on_after(5):  # the server is done: let stdout take what is still buffered
            while write_transport.get_write_buffer_size() and not writer.lost:
                await anyio.sleep(0.01)
    finally:
        read_transport.close()
        write_transport.close()
        restore()
