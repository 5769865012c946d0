"""A handler's `prepare` step (asp_protocol/handling.py): run as the request is read, before the
request's task first runs; its value is the handler's input; a refusal is answered typed; the
value is closed once the request is over, however it ended."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream

from asp_protocol.early import EARLY_REQUEST_BYTES
from asp_protocol.errors import AspError, ErrorCode, RequestTimeout
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext
from tests.protocol.test_protocol_jsonrpc import connected_pair, raw_exchange
from tests.protocol.test_protocol_pipe_replies import piped

pytestmark = pytest.mark.anyio


class Started:
    """A prepared input that records the order of events and whether it was closed."""

    def __init__(self, log: list[str], params: Any) -> None:
        self.log, self.params, self.closed = log, params, 0
        log.append(f"prepare {params['n']}")

    def close(self) -> None:
        self.closed += 1
        self.log.append(f"close {self.params['n']}")


def _request(request_id: int, method: str, n: int) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"n": n}}
    return json.dumps(message).encode() + b"\n"


def _held_work() -> tuple[list[Started], anyio.Event, Any, Any]:
    """A `work` method whose inputs are recorded and whose handler answers "first" once released."""
    made: list[Started] = []
    release = anyio.Event()

    def prepare(params: Any) -> Started:
        made.append(Started([], params))
        return made[-1]

    async def handler(started: Started, ctx: RequestContext) -> Any:
        await release.wait()
        return "first"

    return made, release, prepare, handler


async def _lines(raw: Any, count: int) -> list[dict[str, Any]]:
    buffer = b""
    while buffer.count(b"\n") < count:
        buffer += await raw.receive()
    return [json.loads(line) for line in buffer.splitlines()]


async def test_prepare_runs_as_each_request_is_read_and_its_value_is_the_handler_input() -> None:
    log: list[str] = []
    made: list[Started] = []

    def prepare(params: Any) -> Started:
        made.append(Started(log, params))
        return made[-1]

    async def handler(started: Started, ctx: RequestContext) -> Any:
        log.append(f"handler {started.params['n']}")
        return {"n": started.params["n"], "closed": started.closed}

    async with connected_pair(serve_client=False) as (server, _, raw):
        server.register("work", handler, prepare=prepare)
        await raw.send(_request(1, "work", 1) + _request(2, "work", 2))  # one chunk, two lines
        answers = await _lines(raw, 2)
    # both were prepared while the lines were read, before either request's task ran
    assert log[:2] == ["prepare 1", "prepare 2"]
    assert sorted(log[2:]) == ["close 1", "close 2", "handler 1", "handler 2"]
    assert sorted(a["id"] for a in answers) == [1, 2]
    assert all(a["result"] == {"n": a["id"], "closed": 0} for a in answers)
    assert [s.closed for s in made] == [1, 1]  # closed once each, after the handler


async def test_a_refused_prepare_is_answered_typed_and_the_handler_never_runs() -> None:
    ran: list[Any] = []

    def prepare(params: Any) -> Started:
        if params["n"] == 1:
            raise AspError(ErrorCode.INVALID_PARAMS, "params refused", detail="n=1")
        raise ValueError("a bug")

    async def handler(started: Started, ctx: RequestContext) -> Any:
        ran.append(started)

    async with connected_pair(serve_client=False) as (server, _, raw):
        server.register("work", handler, prepare=prepare)
        refused = await raw_exchange(raw, _request(1, "work", 1))
        failed = await raw_exchange(raw, _request(2, "work", 2))
    assert refused["id"] == 1 and refused["error"]["code"] == ErrorCode.INVALID_PARAMS.code
    assert refused["error"]["message"] == "params refused"
    assert failed["id"] == 2 and failed["error"]["code"] == ErrorCode.INTERNAL_ERROR.code
    assert not ran


async def test_the_prepared_value_is_closed_when_the_handler_fails_or_is_cancelled() -> None:
    log: list[str] = []
    made: list[Started] = []
    cancelled = anyio.Event()

    def prepare(params: Any) -> Started:
        made.append(Started(log, params))
        return made[-1]

    async def handler(started: Started, ctx: RequestContext) -> Any:
        if started.params["n"] == 1:
            raise RuntimeError("handler bug")
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    async with connected_pair() as (server, client, _):
        server.register("work", handler, prepare=prepare)
        with pytest.raises(AspError) as failed:
            await client.request("work", {"n": 1}, timeout=5)
        with pytest.raises(RequestTimeout):  # the client sends $/cancelRequest
            await client.request("work", {"n": 2}, timeout=0.05)
        with anyio.fail_after(5):
            await cancelled.wait()
            while made[1].closed == 0:
                await anyio.sleep(0.01)
    assert failed.value.code == ErrorCode.INTERNAL_ERROR.code
    assert [s.closed for s in made] == [1, 1]


async def test_a_request_read_as_the_endpoint_shuts_down_has_its_prepared_value_closed() -> None:
    """The endpoint is shut down in the very step that read the request: its handler is
    cancelled at its first checkpoint, and what `prepare` started is closed all the same."""
    log: list[str] = []
    made: list[Started] = []
    ran: list[str] = []
    a, b = socket.socketpair()
    server_stream = await SocketStream.from_socket(a)
    raw = await SocketStream.from_socket(b)
    server = JsonRpcEndpoint(server_stream, server_stream, name="server")
    async with anyio.create_task_group() as tg:

        def prepare(params: Any) -> Started:
            made.append(Started(log, params))
            tg.cancel_scope.cancel()  # the whole endpoint stops here
            return made[-1]

        async def handler(started: Started, ctx: RequestContext) -> Any:
            await anyio.sleep(0)
            ran.append("past its first checkpoint")

        server.register("work", handler, prepare=prepare)
        tg.start_soon(server.serve)
        await raw.send(_request(1, "work", 1))
        await anyio.sleep_forever()
    await raw.aclose()
    assert not ran
    assert [s.closed for s in made] == [1]


async def test_over_a_pipe_a_request_line_is_prepared_in_the_read_callback_once() -> None:
    """A whole request line read from a pipe has its `prepare` step run in the pipe's read
    callback (no task is running there), before the read loop's turn, and only there."""
    log: list[str] = []
    made: list[Started] = []
    where: list[object] = []

    def prepare(params: Any) -> Started:
        where.append(asyncio.current_task())
        made.append(Started(log, params))
        return made[-1]

    async def handler(started: Started, ctx: RequestContext) -> Any:
        return {"n": started.params["n"]}

    async with piped() as (endpoint, peer):
        endpoint.register("work", handler, prepare=prepare)
        for n in (1, 2):
            peer.write(_request(n, "work", n))
            answer = await peer.next_request()  # the peer reads what the endpoint wrote
            assert answer == {"jsonrpc": "2.0", "id": n, "result": {"n": n}}
    assert where == [None, None], "prepared in the read callback, outside any task"
    assert [s.closed for s in made] == [1, 1] and len(log) == 4


async def test_a_prepared_line_the_read_loop_never_reached_is_closed_when_the_endpoint_stops() -> (
    None
):
    made: list[Started] = []

    def prepare(params: Any) -> Started:
        made.append(Started([], params))
        return made[-1]

    async def handler(started: Started, ctx: RequestContext) -> Any:
        raise AssertionError("never dispatched")

    async with piped() as (endpoint, _):
        endpoint.register("work", handler, prepare=prepare)
        assert not endpoint._early.take(_request(1, "work", 1))  # left to the read loop ...
        assert [s.closed for s in made] == [0]  # ... which never gets the line: it came here only
    assert [s.closed for s in made] == [1]


async def test_a_duplicate_id_read_in_the_callback_is_not_prepared_and_is_refused() -> None:
    made, release, prepare, handler = _held_work()
    async with piped() as (endpoint, peer):
        endpoint.register("work", handler, prepare=prepare)
        peer.write(_request(7, "work", 1))
        while not endpoint._inflight:
            await anyio.sleep(0.01)
        peer.write(_request(7, "work", 2))
        duplicate = await peer.next_request()
        release.set()
        first = await peer.next_request()
    assert duplicate["id"] == 7 and duplicate["error"]["code"] == -32600
    assert first == {"jsonrpc": "2.0", "id": 7, "result": "first"}
    assert [s.params["n"] for s in made] == [1] and made[0].closed == 1


async def test_a_line_prepared_in_the_callback_but_refused_by_the_read_loop_is_closed_at_once() -> (
    None
):
    """The read loop decides: a line prepared in the read callback whose id the loop then finds
    in flight is answered as a duplicate, and what was prepared for it is closed there and then."""
    made, release, prepare, handler = _held_work()
    async with piped() as (endpoint, peer):
        endpoint.register("work", handler, prepare=prepare)
        second = _request(7, "work", 2)
        assert not endpoint._early.take(second)  # prepared now, its line read later
        peer.write(_request(7, "work", 1))
        while not endpoint._inflight:
            await anyio.sleep(0.01)
        peer.write(second)
        duplicate = await peer.next_request()
        closed_then = [s.closed for s in made]
        release.set()
        first = await peer.next_request()
    assert duplicate["id"] == 7 and duplicate["error"]["code"] == -32600
    assert first == {"jsonrpc": "2.0", "id": 7, "result": "first"}
    assert [s.params["n"] for s in made] == [2, 1]
    assert closed_then == [1, 0], "the refused line's prepared input closed with its answer"


async def test_a_large_request_line_is_left_whole_to_the_read_loop() -> None:
    """Only small request lines are decoded in the read callback (a line is kept by its bytes
    until the read loop claims it); a large one is read, decoded and prepared there, once."""
    made: list[Started] = []

    def prepare(params: Any) -> Started:
        made.append(Started([], params))
        return made[-1]

    async def handler(started: Started, ctx: RequestContext) -> Any:
        return len(started.params["pad"])

    async with piped() as (endpoint, peer):
        endpoint.register("work", handler, prepare=prepare)
        pad = "x" * EARLY_REQUEST_BYTES
        line = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "work", "params": {"n": 1, "pad": pad}}
        )
        assert not endpoint._early.take(line.encode() + b"\n")
        assert not made and not endpoint._early._lines, "not decoded, prepared or kept here"
        assert endpoint._early.take(_request(2, "work", 2)[:-1] + b"\n") is False
        assert len(made) == 1 and len(endpoint._early._lines) == 1  # a small one is
        endpoint._early.close_all()
        peer.write(line.encode() + b"\n")
        assert await peer.next_request() == {"jsonrpc": "2.0", "id": 1, "result": len(pad)}
    assert len(made) == 2 and made[1].closed == 1
