"""The SDK's own floor for one `tools/call` (not a test): an SDK server doing no work at all.

    python bench/sdk_floor.py RESULT.json [--transport loop|sdk|raw] [--hop HOST ARGS...]

An `MCPServer` with one async tool, `asp_status`, that answers every call with the same
`CallToolResult`, read once from *RESULT.json* (bench/bridge_bench.py writes there a result the
real bridge gave, so the SDK serializes a result of the bridge's size and shape). The SDK is
driven as the bridge drives it (the bridge's `tools/call` handler, a result handed over in its
wire form), but there is no host behind it, no middleware, no labelling: what a round trip costs
here is the least any bridge built on this SDK can cost for that result, whatever it does. `--transport loop` (the default)
serves it on the bridge's own stdio transport and era hand-off (bridge/stdio.py, bridge/eras.py),
as the bridge is served; `--transport sdk` on the SDK's `stdio_server` (worker threads).

`--transport raw` is the same answer without the SDK: each request line is parsed and answered
with the result's JSON, its id put in, on the event loop's pipes. The difference between the raw
and the `loop` rows is what the SDK itself costs per call for a result of that size.

`--hop HOST ARGS...` (with the `loop` transport) makes the tool do the one thing no bridge can
skip before it answers: send `host/status` to the host it started (the command after `--hop`)
and wait for the reply line, parsed only to find its id (nothing checked or labelled). Its added
latency over the native call is the least any bridge on this SDK can add per call (the issue-14
latency target is measured the same way): the extra stdio hop, the SDK's own work and one host
round trip from inside a tool.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic_core import from_json

from bridge.dispatch import ToolDispatch
from bridge.wire_result import text_result


class Hop(asyncio.Protocol):
    """One host subprocess asked `host/status` over its pipes, read and written on the event loop
    as the bridge's host client does: each reply line is matched by id and settles its waiter in
    the pipe's read callback, with nothing else done to it."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.ids = 0
        self.waiting: dict[int, asyncio.Future[None]] = {}
        self.buffer = b""
        self.writer: asyncio.WriteTransport | None = None

    async def connect(self) -> None:
        loop = asyncio.get_running_loop()
        assert self.process.stdout is not None and self.process.stdin is not None
        await loop.connect_read_pipe(lambda: self, self.process.stdout)
        self.writer, _ = await loop.connect_write_pipe(asyncio.Protocol, self.process.stdin)

    def data_received(self, data: bytes) -> None:
        lines = (self.buffer + data).split(b"\n")
        self.buffer = lines.pop()
        for line in lines:
            future = self.waiting.pop(from_json(line).get("id"), None)
            if future is not None and not future.done():
                future.set_result(None)

    async def status(self) -> None:
        self.ids += 1
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting[self.ids] = future
        assert self.writer is not None
        self.writer.write(
            b'{"jsonrpc":"2.0","id":%d,"method":"host/status","params":{}}\n' % self.ids
        )
        await future


def build(result: dict[str, Any], hop: Hop | None = None) -> MCPServer[Any]:
    """The server, driven as the bridge drives the SDK: its `tools/call` handler
    (bridge/dispatch.py) and a result the SDK does not dump again (bridge/wire_result.py)."""
    server: MCPServer[Any] = MCPServer("sdk-floor")
    (block,) = result["content"]
    answer = text_result(
        block["text"],
        result["structuredContent"],
        is_error=bool(result.get("isError")),
        meta=result["_meta"],
    )

    async def same_answer() -> CallToolResult:
        if hop is not None:
            await hop.status()
        return answer

    server.add_tool(same_answer, name="asp_status", description="The same result every call.")
    ToolDispatch(server).install()
    return server


async def serve(result: dict[str, Any], transport: str, hop_argv: list[str]) -> None:
    hop = None
    if hop_argv:
        hop = Hop(subprocess.Popen(hop_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE))
        await hop.connect()
    try:
        await _serve(build(result, hop), transport)
    finally:
        if hop is not None:
            hop.process.kill()
            hop.process.wait()


async def _serve(server: MCPServer[Any], transport: str) -> None:
    lowlevel = server._lowlevel_server
    options = lowlevel.create_initialization_options()
    if transport == "sdk":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, options)
        return
    from bridge import eras
    from bridge.stdio import loop_stdio

    async with loop_stdio() as (read_stream, write_stream):
        await eras.serve(lowlevel, read_stream, write_stream, options)


async def echo(result: dict[str, Any]) -> None:
    """Every request line answered with *result*, no SDK; notifications get nothing."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    tail = b',"result":' + json.dumps(result, separators=(",", ":")).encode() + b"}\n"
    while line := await reader.readline():
        message = json.loads(line)
        if "id" in message:
            transport.write(b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("result", type=Path)
    parser.add_argument("--transport", choices=("loop", "sdk", "raw"), default="loop")
    parser.add_argument("--hop", nargs=argparse.REMAINDER, default=[], help="HOST ARGS...")
    args = parser.parse_args()
    result = json.loads(args.result.read_text(encoding="utf-8"))
    if args.transport == "raw":
        asyncio.run(echo(result))
        return
    anyio.run(serve, result, args.transport, args.hop)


if __name__ == "__main__":
    main()
