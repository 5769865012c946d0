"""The shared JSON-RPC endpoint: correlation, both-way requests, cancellation, progress, bad input."""

from __future__ import annotations

import json
import socket
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream

from asp_protocol.errors import AspError, ConnectionClosed, ErrorCode, RequestTimeout
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext, WireEvent
from tests.support.concurrently import all_at_once

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def connected_pair(
    max_line_bytes: int = 1024 * 1024, *, serve_client: bool = True
) -> AsyncIterator[tuple[JsonRpcEndpoint, JsonRpcEndpoint, SocketStream]]:
    """A server and client endpoint over a real socket pair; yields the raw client-side socket too.

    With `serve_client=False` the client endpoint does not read, so a test can speak raw bytes.
    """
    left, right = socket.socketpair()
    server_stream = await SocketStream.from_socket(left)
    client_stream = await SocketStream.from_socket(right)
    server = JsonRpcEndpoint(
        server_stream, server_stream, name="server", max_line_bytes=max_line_bytes
    )
    client = JsonRpcEndpoint(client_stream, client_stream, name="client")
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        if serve_client:
            tg.start_soon(client.serve)
        try:
            yield server, client, client_stream
        finally:
            tg.cancel_scope.cancel()


async def raw_exchange(stream: SocketStream, payload: bytes) -> dict[str, Any]:
    """Write raw bytes to the server and read one response line back, bypassing the client endpoint."""
    await stream.send(payload)
    buffer = b""
    while b"\n" not in buffer:
        buffer += await stream.receive()
    return json.loads(buffer.split(b"\n", 1)[0])


async def test_requests_flow_both_ways_on_one_pipe() -> None:
    async with connected_pair() as (server, client, _):

        async def ask_back(params: Any, ctx: RequestContext) -> Any:
            answer = await ctx.endpoint.request("client/echo", {"n": params["n"] * 2})
            return {"server": params["n"], "client": answer}

        async def echo(params: Any, ctx: RequestContext) -> Any:
            return params["n"] + 1

        server.register("server/ask", ask_back)
        client.register("client/echo", echo)
        result = await client.request("server/ask", {"n": 5})
    assert result == {"server": 5, "client": 11}


async def test_concurrent_requests_are_correlated_by_id() -> None:
    async with connected_pair() as (server, client, _):

        async def delayed_echo(params: Any, ctx: RequestContext) -> Any:
            # Later requests finish first, so answers arrive out of order.
            for _ in range(50 - params["i"]):
                await anyio.lowlevel.checkpoint()
            return params["i"]

        server.register("echo", delayed_echo)
        results = await all_at_once(50, lambda i: client.request("echo", {"i": i}))
    assert results == {i: i for i in range(50)}


async def test_typed_errors_cross_the_wire_with_fail_class() -> None:
    async with connected_pair() as (server, client, _):

        async def denied(params: Any, ctx: RequestContext) -> Any:
            raise AspError(ErrorCode.SCOPE_DENIED, "outside the read grant", detail="secrets/x")

        server.register("read", denied)
        with pytest.raises(AspError) as caught:
            await client.request("read", {})
    assert caught.value.code == -32012
    assert caught.value.fail_class == "policy"
    assert caught.value.detail == "secrets/x"


async def test_unknown_method_is_32601_and_serving_continues() -> None:
    async with connected_pair() as (server, client, _):
        server.register("ok", lambda params, ctx: _value("fine"))
        with pytest.raises(AspError) as caught:
            await client.request("no/such/method", {})
        assert caught.value.code == -32601
        assert await client.request("ok") == "fine"


async def _value(value: Any) -> Any:
    return value


async def test_garbage_and_oversized_lines_get_parse_errors_with_null_id() -> None:
    async with connected_pair(max_line_bytes=1000, serve_client=False) as (server, _, raw):
        server.register("ok", lambda params, ctx: _value("still serving"))
        garbage = await raw_exchange(raw, b"{not json\n")
        huge = b'{"jsonrpc":"2.0","id":9,"method":"ok","params":"' + b"x" * 5000 + b'"}\n'
        oversized = await raw_exchange(raw, huge)
        not_rpc = await raw_exchange(raw, b'{"id": 4, "method": "ok"}\n')
        not_json = await raw_exchange(raw, b'{"jsonrpc":"2.0","id":6,"method":"ok","params":NaN}\n')
        after = await raw_exchange(raw, b'{"jsonrpc":"2.0","id":5,"method":"ok"}\n')
    assert after == {"jsonrpc": "2.0", "id": 5, "result": "still serving"}
    assert garbage["id"] is None and garbage["error"]["code"] == -32700
    assert garbage["error"]["data"]["failClass"] == "contract"
    assert oversized["id"] is None and oversized["error"]["code"] == -32700
    assert not_rpc["id"] == 4 and not_rpc["error"]["code"] == -32600
    assert not_json["id"] is None and not_json["error"]["code"] == -32700  # NaN is not JSON


async def test_duplicate_in_flight_id_is_rejected_without_disturbing_the_first() -> None:
    async with connected_pair(serve_client=False) as (server, _, raw):
        release = anyio.Event()

        async def slow(params: Any, ctx: RequestContext) -> Any:
            await release.wait()
            return "first"

        server.register("slow", slow)
        request = b'{"jsonrpc":"2.0","id":"dup","method":"slow"}\n'
        await raw.send(request)
        duplicate = await raw_exchange(raw, request)
        release.set()
        buffer = b""
        while b"\n" not in buffer:
            buffer += await raw.receive()
    assert duplicate["id"] == "dup" and duplicate["error"]["code"] == -32600
    assert json.loads(buffer.split(b"\n", 1)[0]) == {
        "jsonrpc": "2.0",
        "id": "dup",
        "result": "first",
    }


async def test_timeout_sends_cancel_request_and_the_handler_is_cancelled() -> None:
    async with connected_pair() as (server, client, _):
        handler_cancelled = anyio.Event()

        async def hang(params: Any, ctx: RequestContext) -> Any:
            try:
                await anyio.sleep_forever()
            finally:
                handler_cancelled.set()

        server.register("hang", hang)
        with pytest.raises(RequestTimeout):
            await client.request("hang", timeout=0.05)
        with anyio.fail_after(5):
            await handler_cancelled.wait()


async def test_cooperative_handler_sees_cancel_and_answers_itself() -> None:
    async with connected_pair() as (server, client, _):
        answered = anyio.Event()

        async def cooperative(params: Any, ctx: RequestContext) -> Any:
            await ctx.cancel_requested.wait()
            answered.set()
            return {"status": "cancelled"}

        server.register("work", cooperative, cooperative_cancel=True)
        with anyio.move_on_after(0.05):
            await client.request("work")
        with anyio.fail_after(5):
            await answered.wait()


async def test_progress_is_routed_to_the_pending_request() -> None:
    async with connected_pair() as (server, client, _):

        async def chatty(params: Any, ctx: RequestContext) -> Any:
            for percentage in (10, 50, 90):
                await ctx.progress({"kind": "report", "percentage": percentage})
            return "done"

        server.register("work", chatty)
        seen: list[Any] = []

        async def on_progress(value: Any) -> None:
            seen.append(value["percentage"])

        assert await client.request("work", on_progress=on_progress) == "done"
        # Progress notifications precede the response on the wire; delivery runs in tasks.
        with anyio.fail_after(5):
            while len(seen) < 3:
                await anyio.lowlevel.checkpoint()
    assert sorted(seen) == [10, 50, 90]


async def test_stream_close_fails_every_pending_request_at_once() -> None:
    async with connected_pair() as (server, client, _):
        started = anyio.Event()
        count = 0

        async def hang(params: Any, ctx: RequestContext) -> Any:
            nonlocal count
            count += 1
            if count == 10:
                started.set()
            await anyio.sleep_forever()

        server.register("hang", hang)
        failures: list[BaseException] = []

        async def call() -> None:
            try:
                await client.request("hang")
            except ConnectionClosed as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(call)
            await started.wait()
            await server._send_stream.aclose()  # the peer goes away mid-request
        assert len(failures) == 10
        with pytest.raises(ConnectionClosed):
            await client.request("hang")


async def test_wire_events_record_sizes_not_payloads() -> None:
    events: list[WireEvent] = []
    left, right = socket.socketpair()
    a = await SocketStream.from_socket(left)
    b = await SocketStream.from_socket(right)
    server = JsonRpcEndpoint(a, a)
    client = JsonRpcEndpoint(b, b, on_wire=events.append)
    server.register("echo", lambda params, ctx: _value(params))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        tg.start_soon(client.serve)
        await client.request("echo", {"secret": "s3cr3t"})
        tg.cancel_scope.cancel()
    kinds = [(e.direction, e.kind, e.method) for e in events]
    assert kinds == [("out", "request", "echo"), ("in", "response", None)]
    assert all(e.size > 0 for e in events)
    assert not any("s3cr3t" in repr(e) for e in events)


PEER_SCRIPT = textwrap.dedent(
    """
    import anyio
    from asp_protocol.framing import stdio_byte_streams
    from asp_protocol.jsonrpc import JsonRpcEndpoint

    async def main():
        receive, send = stdio_byte_streams()
        endpoint = JsonRpcEndpoint(receive, send, name="child")
        async def upper(params, ctx):
            return params["text"].upper()
        endpoint.register("upper", upper)
        await endpoint.serve()

    anyio.run(main)
    """
)


async def test_stdio_streams_serve_a_real_subprocess_over_pipes() -> None:
    async with await anyio.open_process([sys.executable, "-c", PEER_SCRIPT]) as process:
        assert process.stdin is not None and process.stdout is not None
        client = JsonRpcEndpoint(process.stdout, process.stdin, name="parent")
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.serve)
            assert await client.request("upper", {"text": "héllo"}, timeout=20) == "HÉLLO"
            big = "a" * 3_000_000
            assert await client.request("upper", {"text": big}, timeout=20) == big.upper()
            await process.stdin.aclose()
            with anyio.fail_after(20):
                await client.closed_event.wait()
            tg.cancel_scope.cancel()
        assert await process.wait() == 0


async def test_requests_received_before_eof_are_still_answered() -> None:
    """`printf '<request>' | host serve`: the answer must come out even though stdin closed at once."""
    left, right = socket.socketpair()
    server_stream = await SocketStream.from_socket(left)
    server = JsonRpcEndpoint(server_stream, server_stream, name="server")

    async def slow(params: Any, ctx: RequestContext) -> Any:
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        return "answered"

    server.register("slow", slow)
    right.sendall(b'{"jsonrpc":"2.0","id":1,"method":"slow"}\n')
    right.shutdown(socket.SHUT_WR)
    with anyio.fail_after(10):
        await server.serve()
    right.settimeout(5)
    reply = json.loads(right.recv(65536).split(b"\n", 1)[0])
    right.close()
    assert reply == {"jsonrpc": "2.0", "id": 1, "result": "answered"}
    with pytest.raises(ConnectionClosed):
        await server.request("anything")


async def test_deeply_nested_line_is_a_parse_error_and_serving_continues() -> None:
    async with connected_pair(serve_client=False) as (server, _, raw):
        server.register("ok", lambda params, ctx: _value("still serving"))
        deep = b'{"jsonrpc":"2.0","id":7,"method":"ok","params":' + b"[" * 100_000
        nested = await raw_exchange(raw, deep + b"]" * 100_000 + b"}\n")
        after = await raw_exchange(raw, b'{"jsonrpc":"2.0","id":8,"method":"ok"}\n')
    assert nested["id"] is None and nested["error"]["code"] == -32700
    assert after == {"jsonrpc": "2.0", "id": 8, "result": "still serving"}


async def test_a_boolean_response_id_never_matches_an_integer_request() -> None:
    """`true == 1` in Python; a peer answering id true must not resolve our request 1."""
    async with connected_pair(serve_client=False) as (server, _, raw):
        answer = anyio.Event()
        outcome: dict[str, Any] = {}

        async def ask() -> None:
            try:
                outcome["result"] = await server.request("client/x", timeout=5)
            except RequestTimeout:
                outcome["timeout"] = True
            answer.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            line = b""
            while b"\n" not in line:
                line += await raw.receive()
            request = json.loads(line.split(b"\n", 1)[0])
            assert request["id"] == 1
            await raw.send(b'{"jsonrpc":"2.0","id":true,"result":"forged"}\n')
            await raw.send(b'{"jsonrpc":"2.0","id":1,"result":"real"}\n')
            await answer.wait()
    assert outcome == {"result": "real"}


async def test_an_oversized_answer_fails_its_call_at_once_typed() -> None:
    """A reply over the caller's line limit is a protocol violation now, not a wait for the deadline."""
    from asp_protocol.errors import ProtocolViolation

    left, right = socket.socketpair()
    server_stream = await SocketStream.from_socket(left)
    client_stream = await SocketStream.from_socket(right)
    server = JsonRpcEndpoint(server_stream, server_stream, name="server")
    client = JsonRpcEndpoint(client_stream, client_stream, name="client", max_line_bytes=1000)
    server.register("big", lambda params, ctx: _value("x" * 5000))
    server.register("ok", lambda params, ctx: _value("still serving"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        tg.start_soon(client.serve)
        with anyio.fail_after(5):  # the deadline below is 60 s: only an immediate failure passes
            with pytest.raises(ProtocolViolation, match="exceeds the line limit"):
                await client.request("big", None, timeout=60)
            assert await client.request("ok", None, timeout=60) == "still serving"
        tg.cancel_scope.cancel()


async def test_an_answered_id_is_free_the_moment_its_answer_leaves() -> None:
    """A peer may reuse an id as soon as it reads the answer; the endpoint must already accept it."""
    left, right = socket.socketpair()
    server_stream = await SocketStream.from_socket(left)
    raw = await SocketStream.from_socket(right)
    still_in_flight: list[bool] = []
    server: JsonRpcEndpoint

    def on_wire(event: WireEvent) -> None:
        if event.direction == "out" and event.id == "again":
            # White-box on purpose: this is the instant the peer could already resend the id.
            still_in_flight.append("again" in server._inflight)

    server = JsonRpcEndpoint(server_stream, server_stream, name="server", on_wire=on_wire)
    server.register("ok", lambda params, ctx: _value("fine"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        answers = [
            await raw_exchange(raw, b'{"jsonrpc":"2.0","id":"again","method":"ok"}\n')
            for _ in range(20)
        ]
        tg.cancel_scope.cancel()
    assert [answer.get("result") for answer in answers] == ["fine"] * 20
    assert still_in_flight == [False] * 20
