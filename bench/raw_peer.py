"""A hand-written newline-delimited JSON-RPC client for the benchmarks, and what they read from
/proc about the processes they drive. bench/ is not a package: scripts import this from beside
them. No SDK client is used, so no client-side SDK cost is counted in a figure."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import Process
from bench_support import stop_process


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
    middle = peer.process.pid
    behind = children(middle)
    cpu_before = cpu_s(middle), sum(cpu_s(pid) for pid in behind)
    latencies: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        await call(peer)
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    started = time.perf_counter()
    await calls_in_flight(peer, call, calls, concurrency)
    elapsed = time.perf_counter() - started
    cpu_after = cpu_s(middle), sum(cpu_s(pid) for pid in behind)
    return {
        "p50": statistics.median(latencies),
        "p90": latencies[int(0.9 * (len(latencies) - 1))],
        "throughput": calls / elapsed,
        "cpu_ms": 1000 * (cpu_after[0] - cpu_before[0]) / (2 * calls),
        "host_cpu_ms": 1000 * (cpu_after[1] - cpu_before[1]) / (2 * calls) if behind else 0.0,
    }


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of *pid* so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """Direct child pids of *pid* (the host behind a proxy or bridge)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def initialize(peer: RawPeer) -> None:
    await peer.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-bench", "version": "0"},
        },
    )
    await peer.notify("notifications/initialized")


@asynccontextmanager
async def spawned(argv: list[str], repo: Path) -> AsyncIterator[RawPeer]:
    process = await anyio.open_process(argv, stdin=PIPE, stdout=PIPE, stderr=None, cwd=str(repo))
    peer = RawPeer(process)
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.reader)
        try:
            yield peer
        finally:
            await stop_process(process, 10)
            tg.cancel_scope.cancel()


async def calls_in_flight(peer: RawPeer, call: Any, calls: int, concurrency: int) -> None:
    """*calls* calls of *call* with *concurrency* of them in flight at any time."""
    remaining = calls

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call(peer)

    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
