"""Byte streams over pipe file descriptors, read and written on the asyncio event loop.

The worker-thread streams in `asp_protocol.framing` cost two thread hand-offs per line (one to
read, one to write); attached to the loop with `connect_read_pipe` / `connect_write_pipe`, a line
costs one `read` and one `write` system call in the loop's own thread. The transports attach
lazily, on first use, because `stdio_byte_streams()` is a plain function. Only pipes and sockets qualify (the loop cannot poll a regular file), and only
inside a running asyncio loop (anyio's trio backend keeps the thread streams).
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections import deque
from collections.abc import Callable

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

_PAUSE_AT = 1024 * 1024  # bytes buffered before the reader stops reading the pipe


def pollable(fd: int) -> bool:
    """Whether the event loop can poll *fd*: a pipe or a socket (never a regular file or a tty)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Reader(asyncio.Protocol):
    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.eof = False
        self.waiter: asyncio.Future[None] | None = None
        self.transport: asyncio.ReadTransport | None = None
        self.paused = False
        self.taker: Callable[[bytes], bool] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self.transport = transport

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def data_received(self, data: bytes) -> None:
        if not self.chunks and self.taker is not None and self.taker(data):
            return
        self.chunks.append(data)
        self.size += len(data)
        if self.size >= _PAUSE_AT and self.transport is not None and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self._wake()


class PipeWriter(asyncio.Protocol):
    """Flow control for a write pipe: `drain` waits only while the pipe is full; `lost` once the
    reader has gone (the bridge's own stdout transport uses it too)."""

    def __init__(self) -> None:
        self._can_write = asyncio.Event()
        self._can_write.set()
        self.lost = False

    def pause_writing(self) -> None:
        self._can_write.clear()

    def resume_writing(self) -> None:
        self._can_write.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._can_write.set()

    async def drain(self) -> None:
        await self._can_write.wait()


class LoopReceiveStream(ByteReceiveStream):
    """Reads a pipe fd on the event loop; EOF or a closed pipe ends the stream.

    An *owned* fd is the stream's to close (the host client's pipe from its host's stdout).
    `offer_first` lets the reader of the stream take a chunk in the loop's own callback, the
    moment it arrives, instead of a task woken for it one loop turn later (see its doc)."""

    def __init__(self, fd: int, *, owned: bool = False) -> None:
        self._fd, self._owned, self._protocol = fd, owned, _Reader()
        self._transport: asyncio.ReadTransport | None = None
        self._closed = False

    def offer_first(self, taker: Callable[[bytes], bool]) -> None:
        """Hand each chunk that arrives while none is waiting to be received to *taker* first;
        a chunk it takes (True) is not received. It runs inside the event loop's read callback:
        it must not block, await or raise."""
        self._protocol.taker = taker

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._transport is None:
            if self._closed:
                raise anyio.ClosedResourceError
            pipe = os.fdopen(self._fd, "rb", buffering=0, closefd=self._owned)
            loop = asyncio.get_running_loop()
            self._transport, _ = await loop.connect_read_pipe(lambda: self._protocol, pipe)
        protocol = self._protocol
        while not protocol.chunks:
            if protocol.eof:
                raise anyio.EndOfStream
            protocol.waiter = asyncio.get_running_loop().create_future()
            try:
                await protocol.waiter
            finally:
                protocol.waiter = None
        data = protocol.chunks.popleft()
        if len(data) > max_bytes:
            protocol.chunks.appendleft(data[max_bytes:])
            data = data[:max_bytes]
        protocol.size -= len(data)
        if protocol.paused and protocol.size < _PAUSE_AT // 2 and self._transport is not None:
            protocol.paused = False
            self._transport.resume_reading()
        return data

    async def aclose(self) -> None:
        if self._transport is not None:
            self._transport.close()
        elif self._owned and not self._closed:
            os.close(self._fd)
        self._closed = True


class LoopSendStream(ByteSendStream):
    """Writes a pipe fd on the event loop; waits only while the pipe is full.

    An *owned* fd is the stream's: closing the stream writes what is still buffered, then closes
    the pipe, which its reader sees as EOF (the host client's pipe to its host's stdin). Otherwise
    (the process's own stdout) closing leaves the fd open for the process's last words."""

    def __init__(self, fd: int, *, owned: bool = False) -> None:
        self._fd, self._owned, self._protocol = fd, owned, PipeWriter()
        self._transport: asyncio.WriteTransport | None = None
        self._closed = False

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._transport is None:
            pipe = os.fdopen(self._fd, "wb", buffering=0, closefd=self._owned)
            loop = asyncio.get_running_loop()
            self._transport, _ = await loop.connect_write_pipe(lambda: self._protocol, pipe)
        if self._protocol.lost or self._transport.is_closing():
            raise anyio.BrokenResourceError
        self._transport.write(item)
        await self._protocol.drain()  # returns at once unless the pipe is full
        if self._protocol.lost:
            raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        if not self._owned or self._closed:
            return  # stdout stays open; the OS closes it at exit
        self._closed = True
        if self._transport is not None:
            self._transport.close()
        else:
            os.close(self._fd)


def loop_streams(read_fd: int, write_fd: int) -> tuple[ByteReceiveStream, ByteSendStream] | None:
    """Event-loop streams over two pipe fds, or None when they cannot serve (see the module doc)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not inside an asyncio loop (another backend, or no loop yet)
        return None
    if not (pollable(read_fd) and pollable(write_fd)):
        return None
    if os.environ.get("ASP_STDIO_THREADS") == "1":
        return None
    return LoopReceiveStream(read_fd), LoopSendStream(write_fd)
