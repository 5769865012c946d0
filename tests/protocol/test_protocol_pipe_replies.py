"""Replies read from a pipe on the event loop: a whole reply line is settled in the read callback,
everything else is read by the endpoint's reader as before, and messages keep their order."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from asp_protocol.jsonrpc import JsonRpcEndpoint
from asp_protocol.pipes import LoopReceiveStream, LoopSendStream

pytestmark = pytest.mark.anyio


class Peer:
    """The far end of the pipes, spoken to in raw bytes."""

    def __init__(self, requests_fd: int, replies_fd: int) -> None:
        self.requests_fd, self.replies_fd = requests_fd, replies_fd

    async def next_request(self) -> dict[str, Any]:
        data = b""
        while not data.endswith(b"\n"):
            await anyio.wait_readable(self.requests_fd)
            data += os.read(self.requests_fd, 65536)
        return json.loads(data)

    def write(self, data: bytes) -> None:
        os.write(self.replies_fd, data)


@asynccontextmanager
async def piped(max_line_bytes: int = 1024 * 1024) -> AsyncIterator[tuple[JsonRpcEndpoint, Peer]]:
    replies_r, replies_w = os.pipe()
    requests_r, requests_w = os.pipe()
    endpoint = JsonRpcEndpoint(
        LoopReceiveStream(replies_r, owned=True),
        LoopSendStream(requests_w, owned=True),
        name="client",
        max_line_bytes=max_line_bytes,
    )
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.serve)
            yield endpoint, Peer(requests_r, replies_w)
            tg.cancel_scope.cancel()
    finally:
        os.close(replies_w)
        os.close(requests_r)


def _reply(request_id: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n"


async def test_a_whole_reply_line_is_taken_in_the_read_callback_and_nothing_else() -> None:
    async with piped(max_line_bytes=200) as (endpoint, peer):
        take = endpoint._early.take
        assert not take(_reply(1, {}))  # no request of ours waits
        results: list[Any] = []

        async def ask() -> None:
            results.append(await endpoint.request("m", timeout=5))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            request = await peer.next_request()
            assert not take(_reply(request["id"], 1)[:-1])  # no newline yet: a partial line
            assert not take(_reply(request["id"], 1) * 2)  # two lines
            assert not take(b'{"jsonrpc":"2.0","method":"$/progress","params":{}}\n')
            assert not take(b'{"jsonrpc":"2.0","id":' + str(request["id"]).encode() + b"}\n")
            assert not take(b"not json\n")
            assert not take(_reply(request["id"], "x" * 300))  # over the line limit
            assert take(_reply(request["id"], {"ok": True}))
        assert results == [{"ok": True}]


async def test_replies_split_joined_or_behind_other_lines_are_all_delivered_in_order() -> None:
    async with piped() as (endpoint, peer):
        seen: list[Any] = []

        async def progress(value: Any) -> None:
            seen.append(("progress", value))

        async def ask(name: str) -> None:
            seen.append((name, await endpoint.request(name, timeout=5, on_progress=progress)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "split")
            request = await peer.next_request()
            reply = _reply(request["id"], "split")
            peer.write(reply[:10])
            await anyio.sleep(0.05)  # let the first half be read on its own
            peer.write(reply[10:])
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "behind progress")
            request = await peer.next_request()
            note = {"jsonrpc": "2.0", "method": "$/progress"}
            note["params"] = {"token": request["id"], "value": {"done": 1}}
            peer.write(json.dumps(note).encode() + b"\n" + _reply(request["id"], "after"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "first")
            first = await peer.next_request()
            tg.start_soon(ask, "second")
            second = await peer.next_request()
            peer.write(_reply(second["id"], 2) + _reply(first["id"], 1))
        assert seen[:3] == [
            ("split", "split"),
            ("progress", {"done": 1}),
            ("behind progress", "after"),
        ]
        assert sorted(seen[3:]) == [("first", 1), ("second", 2)]
