"""Bridge overhead benchmark (not a test): native `host/status` vs `tools/call asp_status` through the bridge.

Both sides use minimal hand-written JSON-RPC clients over a subprocess's stdio, so the SDK
client's own overhead is not counted, and both talk to the same kind of host process.

    python bench/bridge_bench.py [--calls 2000] [--concurrency 8] [--host bad|reference]

`bad` (default) is the cheap scripted host in tests/support (isolates the bridge's cost);
`reference` is this installation's reference host on this repository.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import Process

ROOT = Path(__file__).resolve().parents[1]
BAD_HOST = ROOT / "tests" / "support" / "bad_host.py"


class RawPeer:
    """One subprocess spoken to with newline-delimited JSON-RPC; responses matched by id."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.ids = 0
        self.waiting: dict[int, tuple[anyio.Event, list[Any]]] = {}
        self.buffer = b""

    async def reader(self) -> None:
        assert self.process.stdout is not None
        async for chunk in self.process.stdout:
            self.buffer += chunk
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                message = json.loads(line)
                slot = self.waiting.pop(message.get("id"), None) if "id" in message else None
                if slot is not None:
                    slot[1].append(message)
                    slot[0].set()

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        self.ids += 1
        request_id = self.ids
        event: anyio.Event = anyio.Event()
        box: list[Any] = []
        self.waiting[request_id] = (event, box)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")
        await event.wait()
        reply = box[0]
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    async def notify(self, method: str, params: Any = None) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")


async def measure(peer: RawPeer, call: Any, calls: int, concurrency: int) -> dict[str, float]:
    for _ in range(min(50, calls)):  # warm-up
        await call(peer)
    latencies: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        await call(peer)
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call(peer)

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    elapsed = time.perf_counter() - started
    return {
        "p50": statistics.median(latencies),
        "p90": latencies[int(0.9 * (len(latencies) - 1))],
        "throughput": calls / elapsed,
    }


async def native_status(peer: RawPeer) -> None:
    result = await peer.request("host/status")
    assert "receipt" in result


async def bridge_status(peer: RawPeer) -> None:
    result = await peer.request("tools/call", {"name": "asp_status", "arguments": {}})
    envelope = result["structuredContent"]
    if result.get("isError") or envelope["nonAuthoritative"] is not True:
        raise RuntimeError(f"bridged call failed: {json.dumps(envelope.get('error'))[:500]}")


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    repo = Path(args.repo).resolve()
    if args.host == "bad":
        base = [sys.executable, str(BAD_HOST), "ok"]
    else:
        base = [sys.executable, "-m", "reference_host"]
    host_argv = [*base, "serve", "--repo", str(repo)]  # what the bridge appends to a bare command
    bridge_argv = [
        sys.executable,
        "-m",
        "bridge",
        "serve",
        "--repo",
        str(repo),
        "--host",
        shlex.join(base),
    ]
    rows = []
    for label, argv, call in (
        ("native host/status", host_argv, native_status),
        ("bridge asp_status", bridge_argv, bridge_status),
    ):
        process = await anyio.open_process(
            argv, stdin=PIPE, stdout=PIPE, stderr=None, cwd=str(repo)
        )
        peer = RawPeer(process)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.reader)
            if call is bridge_status:
                await peer.request(
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "raw-bench", "version": "0"},
                    },
                )
                await peer.notify("notifications/initialized")
            rows.append({"path": label, **await measure(peer, call, args.calls, args.concurrency)})
            assert process.stdin is not None
            await process.stdin.aclose()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
            tg.cancel_scope.cancel()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--host", choices=("bad", "reference"), default="bad")
    parser.add_argument("--repo", default=str(ROOT))
    args = parser.parse_args()
    rows = anyio.run(run, args)
    native, bridged = rows
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} · {os.cpu_count()} CPUs · "
        f"{platform.system()} {platform.release()} · Python {platform.python_version()}"
    )
    print(
        f"host: {args.host} · {args.calls} sequential calls per path, then {args.calls} with {args.concurrency} concurrent callers\n"
    )
    print("| path | p50 ms | p90 ms | calls/s (8 concurrent) |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['path']} | {row['p50']:.3f} | {row['p90']:.3f} | {row['throughput']:.0f} |")
    print(
        f"| bridge-added (p50 / p90) | {bridged['p50'] - native['p50']:.3f} | {bridged['p90'] - native['p90']:.3f} | |"
    )


if __name__ == "__main__":
    main()
