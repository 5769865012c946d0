"""The stdio connection's era (bridge/eras.py): chosen by the first request, served by the SDK's era
loops reading the bridge's stream directly, and the other era's claims still refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification, JSONRPCRequest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.jsonrpc import INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION

from bridge import eras
from tests.bridge.test_bridge_stdio_bad_lines import INITIALIZE, RawBridge

MODERN_META = {
    PROTOCOL_VERSION_META_KEY: "2026-07-28",
    CLIENT_INFO_META_KEY: {"name": "raw", "version": "0"},
    CLIENT_CAPABILITIES_META_KEY: {},
}


class _Recorded:
    """A read stream that notes which coroutine asks it for each message."""

    def __init__(self, items: list[SessionMessage]) -> None:
        self.items = items
        self.readers: list[str] = []
        self.done = anyio.Event()  # the input ends once the test has read every answer

    async def receive(self) -> SessionMessage:
        frame, callers = sys._getframe(1), []
        while frame is not None:
            callers.append(frame.f_code.co_qualname)
            frame = frame.f_back  # type: ignore[assignment]
        known = ("_opening", "JSONRPCDispatcher.run", "replay_then_relay")
        self.readers.append(next((name for name in callers if name.endswith(known)), "?"))
        if not self.items:
            await self.done.wait()
            raise anyio.EndOfStream
        return self.items.pop(0)

    def __aiter__(self) -> _Recorded:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> _Recorded:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def _message(method: str, request_id: int | None, params: dict[str, Any]) -> SessionMessage:
    if request_id is None:
        return SessionMessage(JSONRPCNotification(jsonrpc="2.0", method=method, params=params))
    return SessionMessage(
        JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
    )


@pytest.mark.anyio
async def test_the_chosen_era_loop_reads_the_stream_itself_after_the_opening_frames() -> None:
    assert eras.direct(), "the installed SDK lacks the era loops: bridge/eras.py falls back"
    stray = _message("notifications/initialized", None, {})  # before the first request: kept
    reads = _Recorded(
        [stray, _message("initialize", 1, INITIALIZE["params"]), _message("ping", 2, {})]
    )
    send, receive = anyio.create_memory_object_stream[SessionMessage](8)
    server: Server[Any] = Server("eras-test")
    answers: list[Any] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(eras.serve, server, reads, send, server.create_initialization_options())
            answers = [(await receive.receive()).message for _ in range(2)]
            reads.done.set()
    assert [getattr(a, "id", None) for a in answers] == [1, 2]
    assert all(getattr(a, "result", None) is not None for a in answers)
    # the opening frames were read while deciding, every later one by the dispatcher's own loop:
    # no relay task between the transport and the SDK
    assert reads.readers[:2] == ["_opening", "_opening"]
    assert set(reads.readers[2:]) == {"JSONRPCDispatcher.run"}, reads.readers


@pytest.mark.slow
def test_a_legacy_connection_refuses_an_enveloped_request(tmp_path: Path) -> None:
    raw = RawBridge(tmp_path)
    try:
        assert "result" in raw.send(json.dumps(INITIALIZE).encode())
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": MODERN_META}}
        answer = raw.send(json.dumps(ping).encode())
        assert answer["id"] == 2 and answer["error"]["code"] == INVALID_REQUEST
        plain = raw.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode())
        assert plain == {"jsonrpc": "2.0", "id": 3, "result": {}}
    finally:
        raw.close()


@pytest.mark.slow
def test_a_modern_connection_serves_enveloped_requests_and_refuses_initialize(
    tmp_path: Path,
) -> None:
    raw = RawBridge(tmp_path)
    try:
        listing = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": MODERN_META},
        }
        tools = raw.send(json.dumps(listing).encode())
        assert "asp_status" in {tool["name"] for tool in tools["result"]["tools"]}
        late = raw.send(json.dumps({**INITIALIZE, "id": 2}).encode())
        assert late["id"] == 2 and late["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    finally:
        raw.close()
