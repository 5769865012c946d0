"""Serving a stdio connection in the protocol era its first request opens, with no relay task.

The SDK's `Server.run` decides the era the way this module does (the first request: one carrying
the 2026-07-28 `_meta` envelope opens a modern connection, anything else, `initialize` included, a
legacy one), but then keeps a task that copies every later message from the transport into a memory
stream for the chosen loop, with a copy of the contextvars per message. That copy exists for
transports that carry a per-message context (ASGI middleware on HTTP); the bridge's own stdio
streams (bridge/stdio.py) carry none. Measured by knocking it out (bench/bridge_instructions.py), the
relay was about 145 K of the 1.89 M instructions per `tools/call asp_status` and one loop turn per
message. Here the chosen loop reads the transport's stream itself, after the frames read while
deciding.

The era loops themselves are the SDK's (`_serve_legacy_stream`, `_serve_modern_stream`: the
handshake, the refusal of the other era's claims, cancellation, progress); only the hand-off is
ours. They are private names of the SDK, so when an SDK release lacks them, `serve` falls back to
`Server.run` unchanged, logged once; a test fails when that happens with the pinned SDK.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server import runner as _runner
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCRequest

log = logging.getLogger(__name__)

_LEGACY: Callable[..., Any] | None = getattr(_runner, "_serve_legacy_stream", None)
_MODERN: Callable[..., Any] | None = getattr(_runner, "_serve_modern_stream", None)
_HAS_ENVELOPE: Callable[[Any], bool] | None = getattr(_runner, "_has_modern_envelope", None)
# frames kept from before the first request (the SDK keeps as many; a stray notification matters)
_PRE_REQUEST_LIMIT: int = getattr(_runner, "_PRE_REQUEST_REPLAY_LIMIT", 8)

Item = SessionMessage | Exception


def direct() -> bool:
    """Whether this SDK has the era loops this module hands the connection to."""
    return _LEGACY is not None and _MODERN is not None and _HAS_ENVELOPE is not None


class _Prepended:
    """The transport's read stream with the frames read while deciding the era put back first."""

    def __init__(self, lead: list[Item], stream: Any) -> None:
        self._lead, self._stream = lead, stream

    async def receive(self) -> Item:
        if self._lead:
            return self._lead.pop(0)
        item: Item = await self._stream.receive()
        return item

    def __aiter__(self) -> _Prepended:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _Prepended:
        return self

    async def __aexit__(self, *_exc_info: object) -> None:
        await self.aclose()


async def _opening(stream: Any) -> tuple[list[Item], JSONRPCRequest | None]:
    """The frames up to and including the first request (None when the input ends first)."""
    lead: list[Item] = []
    async for item in stream:
        request = item.message if isinstance(item, SessionMessage) else None
        if isinstance(request, JSONRPCRequest):
            lead.append(item)
            return lead, request
        if len(lead) < _PRE_REQUEST_LIMIT:
            lead.append(item)
        else:
            log.debug("dropped a frame received before the first request: %r", item)
    return lead, None


async def serve(
    server: Server[Any], read_stream: Any, write_stream: Any, options: InitializationOptions
) -> None:
    """Run *server*'s lifespan and serve one connection in the era its first request opens."""
    if not direct():
        log.warning("this SDK has no era loops to hand stdio to: serving through Server.run")
        await server.run(read_stream, write_stream, options)
        return
    assert _LEGACY is not None and _MODERN is not None and _HAS_ENVELOPE is not None
    async with server.lifespan(server) as state:
        try:
            lead, opening = await _opening(read_stream)
            reads = _Prepended(lead, read_stream)
            modern = opening is not None and opening.method != "initialize"
            if modern and _HAS_ENVELOPE(opening.params if opening else None):
                await _MODERN(
                    server, reads, write_stream, lifespan_state=state, raise_exceptions=False
                )
            else:
                await _LEGACY(
                    server,
                    reads,
                    write_stream,
                    lifespan_state=state,
                    session_id=None,
                    init_options=options,
                    raise_exceptions=False,
                )
        finally:
            await write_stream.aclose()
