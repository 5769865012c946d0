"""Bridge overhead benchmark (not a test): the same calls natively, through a raw NDJSON proxy (the
floor of one stdio hop) and through the bridge, side by side in one run, on two hosts.

Minimal hand-written JSON-RPC clients speak to each subprocess's stdio, so no SDK client cost is
counted. Rows per host: native `host/status`, the proxy, `tools/call asp_status`; on the reference
host also a ~100 KB inspect page (native `host/queryInspect` vs `asp_inspect`). Then the bridge's
resident memory after 100 and after 10,000 calls, and the first `asp_status` after `serve`
starts (host spawn included).

    python bench/bridge_bench.py [--calls 1000] [--concurrency 8] [--hosts bad,reference]

`bad` is the cheap scripted host in tests/support (isolates the bridge's cost); `reference` is this
installation's reference host on this repository. Beside each latency row is the CPU time per call
of the process in the middle (the host itself on the native row, the proxy, the bridge) and of
the host behind it, read from /proc: on a shared machine wall-clock latency swings with the
others' load, CPU per call much less. `uptime`'s load average is printed before and after.

To see where the bridge's time goes, profile it under the same load. A sampling profiler attached
to the running bridge (py-spy, `pip install py-spy`; it must not wrap the bridge, whose stdout is
the wire):

    python bench/bridge_bench.py --hosts bad --profile /tmp/bridge.txt   # py-spy raw stacks

or, for CPU time rather than wall time (a loaded machine inflates a sampler's wall time with
time spent runnable but not running), cProfile with a CPU clock over the whole `serve`:

    python bench/bridge_bench.py --hosts bad --cprofile /tmp/bridge.pstats

For an A/B of two commits on a busy machine, count instructions instead of time:
`python bench/bridge_instructions.py` (callgrind; see its docstring).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import Process
from bench_support import stop_process

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


def bridge_serve_argv(repo: Path, host: list[str]) -> list[str]:
    """`bridge serve` on *repo* in front of the host command *host*, run from this interpreter."""
    return [
        sys.executable,
        "-m",
        "bridge",
        "serve",
        "--repo",
        str(repo),
        "--host",
        shlex.join(host),
    ]


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


async def native_status(peer: RawPeer) -> None:
    result = await peer.request("host/status")
    assert "receipt" in result


def _checked(result: dict[str, Any]) -> dict[str, Any]:
    envelope = result["structuredContent"]
    if result.get("isError") or envelope["nonAuthoritative"] is not True:
        raise RuntimeError(f"bridged call failed: {json.dumps(envelope.get('error'))[:500]}")
    return envelope


async def bridge_status(peer: RawPeer) -> None:
    _checked(await peer.request("tools/call", {"name": "asp_status", "arguments": {}}))


INSPECT_LIMIT = 400  # items of a workspace symbols query: about 100 KB of host result here
INSPECT_REQUEST = {"verb": "symbols", "query": "", "limit": INSPECT_LIMIT}


async def native_inspect(peer: RawPeer) -> None:
    result = await peer.request(
        "host/queryInspect", {"callSite": "interactive", "request": INSPECT_REQUEST}
    )
    assert "receipt" in result


async def bridge_inspect(peer: RawPeer) -> None:
    arguments = {"verb": "symbols", "limit": INSPECT_LIMIT}
    _checked(await peer.request("tools/call", {"name": "asp_inspect", "arguments": arguments}))


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


async def warm_inspect(peer: RawPeer, bridged: bool) -> int:
    """Wait out the provider's first index build; the size of one native answer in bytes."""
    with anyio.fail_after(120):
        while True:
            if bridged:
                result = await peer.request(
                    "tools/call",
                    {
                        "name": "asp_inspect",
                        "arguments": {"verb": "symbols", "limit": INSPECT_LIMIT},
                    },
                )
                host_result = result["structuredContent"].get("hostResult") or {}
            else:
                host_result = await peer.request(
                    "host/queryInspect", {"callSite": "interactive", "request": INSPECT_REQUEST}
                )
            degraded = (host_result.get("coverage") or {}).get("degraded") or []
            if host_result and not degraded:
                return len(json.dumps(host_result).encode())
            await anyio.sleep(0.5)


async def first_status(bridge_argv: list[str], repo: Path, runs: int) -> dict[str, float]:
    """p50 ms from spawning `serve` to the `initialize` answer and to the first asp_status answer
    (handshake and host spawn in)."""
    to_init, to_status = [], []
    for _ in range(runs):
        started = time.perf_counter()
        async with spawned(bridge_argv, repo) as peer:
            await initialize(peer)
            to_init.append((time.perf_counter() - started) * 1000)
            await bridge_status(peer)
            to_status.append((time.perf_counter() - started) * 1000)
    return {"initialize": statistics.median(to_init), "status": statistics.median(to_status)}


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


def _profiled(args: argparse.Namespace, argv: list[str]) -> list[str]:
    """The bridge's command under cProfile with a CPU clock (bench/cpu_profile.py), if asked."""
    if not args.cprofile:
        return argv
    return [sys.executable, str(ROOT / "bench" / "cpu_profile.py"), args.cprofile, *argv[1:]]


async def run_host(args: argparse.Namespace, host: str) -> dict[str, Any]:
    repo = Path(args.repo).resolve()
    base = (
        [sys.executable, str(BAD_HOST), "ok"]
        if host == "bad"
        else [sys.executable, "-m", "reference_host"]
    )
    host_argv = [*base, "serve", "--repo", str(repo)]  # what the bridge appends to a bare command
    proxy_argv = [sys.executable, str(ROOT / "bench" / "ndjson_proxy.py"), *host_argv]
    bridge_argv = bridge_serve_argv(repo, base)
    profiling = host == "bad" and bool(args.profile or args.cprofile)
    rows: list[dict[str, Any]] = []
    paths: list[tuple[str, list[str], Any, bool]] = [
        ("native host/status", host_argv, native_status, False),
        ("raw NDJSON proxy (floor)", proxy_argv, native_status, False),
        (
            "bridge asp_status",
            _profiled(args, bridge_argv) if profiling else bridge_argv,
            bridge_status,
            True,
        ),
    ]
    for name, argv, call, bridged in paths:
        async with spawned(argv, repo) as peer:
            if bridged:
                await initialize(peer)
            spy = None
            if bridged and profiling and args.profile:  # attached: py-spy must not own the wire
                spy = subprocess.Popen(
                    [
                        "py-spy",
                        "record",
                        "-r",
                        "500",
                        "-f",
                        "raw",
                        "-o",
                        args.profile,
                        "--pid",
                        str(peer.process.pid),
                    ],
                    stdout=subprocess.DEVNULL,
                )
                await anyio.sleep(1.0)
            rows.append({"path": name, **await measure(peer, call, args.calls, args.concurrency)})
            if spy is not None:
                spy.send_signal(2)
                spy.wait()
    out: dict[str, Any] = {"host": host, "rows": rows}
    if host == "reference":
        inspect_rows = []
        for name, argv, call, bridged in (
            ("native host/queryInspect", host_argv, native_inspect, False),
            ("bridge asp_inspect page", bridge_argv, bridge_inspect, True),
        ):
            async with spawned(argv, repo) as peer:
                if bridged:
                    await initialize(peer)
                size = await warm_inspect(peer, bridged)
                stats = await measure(peer, call, max(100, args.calls // 5), args.concurrency)
                inspect_rows.append({"path": name, "bytes": size, **stats})
        out["inspect"] = inspect_rows
    if host == "bad":
        async with spawned(bridge_argv, repo) as peer:
            await initialize(peer)
            pid = peer.process.pid
            await calls_in_flight(peer, bridge_status, 100, args.concurrency)
            out["rss_100"] = rss_kib(pid)
            await calls_in_flight(peer, bridge_status, 9900, args.concurrency)
            out["rss_10000"] = rss_kib(pid)
    out["first"] = await first_status(bridge_argv, repo, args.starts)
    return out


def _table(result: dict[str, Any], concurrency: int) -> list[str]:
    rows = result["rows"]
    native, floor, bridged = rows
    lines = [
        f"host: {result['host']}",
        "",
        f"| path | p50 ms | p90 ms | calls/s ({concurrency} in flight) "
        "| CPU ms/call (middle · host) |",
        "|---|---:|---:|---:|---:|",
    ]

    def cpu(row: dict[str, Any]) -> str:
        host = f" · {row['host_cpu_ms']:.3f}" if row["host_cpu_ms"] else ""
        return f"{row['cpu_ms']:.3f}{host}"

    for row in rows:
        lines.append(
            f"| {row['path']} | {row['p50']:.3f} | {row['p90']:.3f} | {row['throughput']:.0f} "
            f"| {cpu(row)} |"
        )
    lines.append(f"| floor-added (p50) | {floor['p50'] - native['p50']:.3f} | | | |")
    lines.append(
        f"| bridge-added (p50 / p90) | {bridged['p50'] - native['p50']:.3f} "
        f"| {bridged['p90'] - native['p90']:.3f} "
        f"| {100 * bridged['throughput'] / native['throughput']:.0f}% of native | |"
    )
    for row in result.get("inspect", []):
        lines.append(
            f"| {row['path']} (~{row['bytes'] // 1024} KB host result) | {row['p50']:.3f} "
            f"| {row['p90']:.3f} | {row['throughput']:.0f} | {cpu(row)} |"
        )
    if result.get("inspect"):
        n, b = result["inspect"]
        lines.append(f"| inspect-page bridge-added (p50) | {b['p50'] - n['p50']:.3f} | | | |")
    if "rss_100" in result:
        growth = 100 * (result["rss_10000"] - result["rss_100"]) / result["rss_100"]
        lines.append(
            f"\nbridge RSS: {result['rss_100'] / 1024:.1f} MiB after 100 calls, "
            f"{result['rss_10000'] / 1024:.1f} MiB after 10,000 ({growth:+.1f}%)"
        )
    first = result["first"]
    lines.append(
        f"serve start to initialize answer (p50): {first['initialize']:.0f} ms; "
        f"to first asp_status answer: {first['status']:.0f} ms"
    )
    lines.append(load() + "\n")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--hosts", default="bad,reference")
    parser.add_argument(
        "--starts", type=int, default=5, help="bridge starts for the first-call row"
    )
    parser.add_argument("--repo", default=str(ROOT))
    parser.add_argument(
        "--profile", help="record the bridge (cheap host) with py-spy into this file"
    )
    parser.add_argument(
        "--cprofile", help="run the bridge (cheap host) under cProfile, CPU clock, into this file"
    )
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} · {os.cpu_count()} CPUs · "
        f"{platform.system()} {platform.release()} · Python {platform.python_version()} · " + load()
    )
    print(
        f"{args.calls} sequential calls per path, then {args.calls} with {args.concurrency} in flight\n"
    )
    for host in args.hosts.split(","):
        print("\n".join(_table(anyio.run(run_host, args, host), args.concurrency)))


if __name__ == "__main__":
    main()
