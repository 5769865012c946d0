"""NDJSON framing: one JSON object per line, a hard line-length limit, and byte streams over stdio."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream
from pydantic_core import PydanticSerializationError, to_json

from asp_protocol import DEFAULT_MAX_LINE_BYTES

HEAD_BYTES = 4096


@dataclass(frozen=True)
class OversizedLine:
    """A line that exceeded the limit; its bytes were discarded up to the next newline.

    *head* keeps the first bytes, so the reader can still tell which request an oversized
    response answers (and fail that call at once instead of letting it wait out its deadline)."""

    size: int
    head: bytes = b""


class LineReader:
    """Splits a byte stream into lines, discarding (not buffering) any line over the limit."""

    def __init__(self, stream: ByteReceiveStream, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
        self._stream = stream
        self._max = self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._discarding = 0
        self._head = b""
        self._eof = False

    @property
    def idle(self) -> bool:
        """Nothing read and not yet returned: no partial line, no line being discarded."""
        return not self._buffer and not self._discarding and not self._eof

    async def next_line(self) -> bytes | OversizedLine | None:
        """The next non-empty line without its newline, an OversizedLine marker, or None at EOF."""
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                if self._discarding:
                    size = self._discarding + len(line)
                    self._discarding = 0
                    return OversizedLine(size, self._head)
                if len(line) > self._max:
                    return OversizedLine(len(line), line[:HEAD_BYTES])
                if line.strip():
                    return line
                continue
            if len(self._buffer) > self._max:
                if not self._discarding:
                    self._head = bytes(self._buffer[:HEAD_BYTES])
                self._discarding += len(self._buffer)
                self._buffer.clear()
            if self._eof:
                if self._discarding:
                    size, self._discarding = self._discarding, 0
                    return OversizedLine(size, self._head)
                if self._buffer.strip():
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None
            try:
                chunk = await self._stream.receive(65536)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._eof = True
                continue
            self._buffer.extend(chunk)


class UnencodableMessage(ValueError):
    """A message that has no JSON text: a value JSON cannot hold, or a string with a lone
    surrogate (UTF-8 cannot carry it). Nothing of it was written."""


def compact_json(value: Any) -> bytes:
    """Compact UTF-8 JSON of *value*, as the wire carries it.

    pydantic-core's serializer writes the same bytes as `json.dumps(separators=(",", ":"),
    ensure_ascii=False)` for every JSON value (floats in exponent form may drop a leading
    exponent zero, `1.5e-7` for `1.5e-07`: the same number), four to five times faster: on a
    paged inspect answer of a few hundred KiB the stdlib encoder was most of the provider's
    and the host's CPU per page. Raises `UnencodableMessage` for a value with no JSON text."""
    try:
        return to_json(value)
    except PydanticSerializationError as exc:
        raise UnencodableMessage(str(exc)) from exc


def encode_message(message: dict[str, Any]) -> bytes:
    """One NDJSON line: JSON escapes any newline inside strings."""
    return compact_json(message) + b"\n"


@dataclass(frozen=True)
class EncodedJson:
    """A result already encoded by `compact_json`, answered as it is (`encode_result`): its
    bytes were made ahead of time (the host drafts its status answer while git runs)."""

    data: bytes


def encode_result(request_id: Any, result: Any) -> bytes:
    """The line answering *request_id* with *result*: `encode_message` of the response, with an
    `EncodedJson` result spliced in as it is — the same bytes, as the encoder writes an object
    as its members' encodings joined (`compact_json` of the id still raises for no JSON text)."""
    if isinstance(result, EncodedJson):
        head = b'{"jsonrpc":"2.0","id":' + compact_json(request_id) + b',"result":'
        return head + result.data + b"}\n"
    return encode_message({"jsonrpc": "2.0", "id": request_id, "result": result})


class _FdReceiveStream(ByteReceiveStream):
    """Reads a raw file descriptor in a worker thread that is abandoned on cancellation."""

    def __init__(self, fd: int):
        self._fd = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await anyio.to_thread.run_sync(os.read, self._fd, max_bytes, abandon_on_cancel=True)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        return None


class _FdSendStream(ByteSendStream):
    """Writes a raw file descriptor fully, in a worker thread so a slow reader never blocks the loop."""

    def __init__(self, fd: int):
        self._fd = fd

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def send(self, item: bytes) -> None:
        try:
            await anyio.to_thread.run_sync(self._write_all, item)
        except (BrokenPipeError, OSError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        return None


def stdio_byte_streams() -> tuple[ByteReceiveStream, ByteSendStream]:
    """This process's stdin/stdout as byte streams; everything else must log to stderr.

    Pipes and sockets are read and written on the event loop (`asp_protocol.pipes`): no worker
    thread hop per line, which on a small machine is most of a short request's round trip. A file
    or terminal, or another async backend, keeps the worker-thread streams."""
    sys.stdout.flush()
    from asp_protocol.pipes import loop_streams

    on_loop = loop_streams(sys.stdin.fileno(), sys.stdout.fileno())
    if on_loop is not None:
        return on_loop
    return _FdReceiveStream(sys.stdin.fileno()), _FdSendStream(sys.stdout.fileno())
