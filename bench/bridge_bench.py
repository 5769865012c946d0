"""Bridge overhead benchmark (not a test): the same calls natively, through a raw NDJSON proxy (the
floor of one stdio hop) and through the bridge, side by side in one run, on two hosts.

Minimal hand-written JSON-RPC clients speak to each subprocess's stdio, so no SDK client cost is
counted. Rows per host: native `host/status`, the proxy, `tools/call asp_status`; on the reference
host also a ~100 KB inspect page (native `host/queryInspect` vs `asp_inspect`). Then the bridge's
resident memory after 100 and after 10,000 calls, and the first `asp_status` after `serve`
starts (host spawn included).

On the cheap host, three more rows give the SDK's own floor (bench/sdk_floor.py): an SDK server
whose only tool does nothing but answer a result the bridge just gave (same bytes, no host, no
bridge code), on the bridge's stdio transport and on the SDK's `stdio_server`, beside the same
bytes echoed from the pipes without the SDK. "SDK-added" is the SDK-alone row minus the echo: the
least any bridge built on this SDK adds per call for that result, and the SDK-alone throughput is
the most it can serve.

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
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from raw_peer import (
    RawPeer,
    calls_in_flight,
    initialize,
    load,
    measure,
    rss_kib,
    spawned,
)

ROOT = Path(__file__).resolve().parents[1]
BAD_HOST = ROOT / "tests" / "support" / "bad_host.py"


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


SDK_IMPORT = (sys.executable, "-c", "import mcp.server.mcpserver")


async def first_status(bridge_argv: list[str], repo: Path, runs: int) -> dict[str, float]:
    """p50 ms from spawning `serve` to the `initialize` answer and to the first asp_status answer
    (handshake and host spawn in); beside them, a process that only imports the SDK's server
    (`import mcp` runs the whole package's `__init__`: client, HTTP stack, both eras' types),
    which any MCP server built on this SDK pays before it can answer `initialize`."""
    to_init, to_status, sdk_import = [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        await anyio.run_process(list(SDK_IMPORT), cwd=repo)
        sdk_import.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        async with spawned(bridge_argv, repo) as peer:
            await initialize(peer)
            to_init.append((time.perf_counter() - started) * 1000)
            await bridge_status(peer)
            to_status.append((time.perf_counter() - started) * 1000)
    return {
        "initialize": statistics.median(to_init),
        "status": statistics.median(to_status),
        "sdk_import": statistics.median(sdk_import),
    }


SDK_ROWS = (
    ("raw", "no SDK: the bridge's result echoed from the pipes"),
    ("loop", "SDK alone: do-nothing tool, the bridge's result, the bridge's transport"),
    ("sdk", "SDK alone: the same, on the SDK's stdio_server"),
    ("hop", "SDK + host hop: that tool sends host/status and waits for the line, nothing else"),
)


async def sdk_alone(
    result: dict[str, Any], repo: Path, args: argparse.Namespace, host_argv: list[str]
) -> list[Any]:
    """The SDK's own floor (bench/sdk_floor.py): an SDK server whose tool does nothing but answer
    *result*, one the bridge gave, with no host behind it; beside it the same bytes echoed with
    no SDK. No bridge on this SDK can be faster than the SDK-alone row. The last row adds the one
    step no bridge can skip, a `host/status` round trip to *host_argv* from inside the tool: its
    p50 minus native is the least latency any bridge on this SDK adds."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        saved = Path(scratch) / "result.json"
        saved.write_text(json.dumps(result), encoding="utf-8")
        for transport, name in SDK_ROWS:
            argv = [sys.executable, str(ROOT / "bench" / "sdk_floor.py"), str(saved)]
            if transport == "hop":
                argv += ["--transport", "loop", "--hop", *host_argv]
            else:
                argv += ["--transport", transport]
            async with spawned(argv, repo) as peer:
                await initialize(peer)
                stats = await measure(peer, bridge_status, args.calls, args.concurrency)
                rows.append({"path": name, **stats})
    return rows


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
            bridged_result = await peer.request(
                "tools/call", {"name": "asp_status", "arguments": {}}
            )
        out["sdk"] = await sdk_alone(bridged_result, repo, args, host_argv)
    out["first"] = await first_status(bridge_argv, repo, args.starts)
    return out


def _cpu(row: dict[str, Any]) -> str:
    host = f" · {row['host_cpu_ms']:.3f}" if row["host_cpu_ms"] else ""
    return f"{row['cpu_ms']:.3f}{host}"


def _row(row: dict[str, Any], label: str | None = None) -> str:
    return (
        f"| {label or row['path']} | {row['p50']:.3f} | {row['p90']:.3f} "
        f"| {row['throughput']:.0f} | {_cpu(row)} |"
    )


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

    lines += [_row(row) for row in rows]
    lines.append(f"| floor-added (p50) | {floor['p50'] - native['p50']:.3f} | | | |")
    lines.append(
        f"| bridge-added (p50 / p90) | {bridged['p50'] - native['p50']:.3f} "
        f"| {bridged['p90'] - native['p90']:.3f} "
        f"| {100 * bridged['throughput'] / native['throughput']:.0f}% of native | |"
    )
    if result.get("sdk"):
        raw, alone, _, hop = result["sdk"]
        lines += [_row(row) for row in result["sdk"]]
        lines.append(
            f"| SDK-added (p50): SDK alone minus no SDK | {alone['p50'] - raw['p50']:.3f} | | "
            f"{100 * alone['throughput'] / native['throughput']:.0f}% of native | |"
        )
        lines.append(
            f"| least any bridge on this SDK adds (p50): SDK + host hop minus native "
            f"| {hop['p50'] - native['p50']:.3f} | | "
            f"{100 * hop['throughput'] / native['throughput']:.0f}% of native | |"
        )
    for row in result.get("inspect", []):
        lines.append(_row(row, f"{row['path']} (~{row['bytes'] // 1024} KB host result)"))
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
        f"to first asp_status answer: {first['status']:.0f} ms; "
        f"a process that only runs `import mcp.server.mcpserver`: {first['sdk_import']:.0f} ms"
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
