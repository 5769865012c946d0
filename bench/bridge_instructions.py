"""Instructions per `tools/call asp_status` of the real bridge, under callgrind (not a test).

    python bench/bridge_instructions.py [--calls 200] [--repo TREE] [--inspect]

The A/B figure for the bridge's per-call cost on a shared machine: wall time and even CPU time
move with the other processes' load, a count of executed instructions does not (two runs of the
same tree agree within 0.1%). It runs `python -m bridge serve` over stdio, with the cheap
scripted host behind it, under `valgrind --tool=callgrind` with instrumentation off; after the
handshake and 20 warm-up calls it turns instrumentation on for *calls* sequential
`tools/call asp_status` (bench/bridge_bench.py's raw client) and prints the total divided by
*calls*. Only the bridge's user-space instructions count: the host, system calls and the time a
loop turn spends waiting are not in it. To compare two commits, run it from each tree (`--repo`
and the working directory both name the tree whose code runs: `python -m bridge` imports from
there). A run takes ~20 s. `--sdk-alone RESULT.json` counts bench/sdk_floor.py
instead, the SDK answering that saved result from a do-nothing tool (the SDK's own share).
`--inspect` counts an `asp_inspect` page instead (`symbols` of the
whole workspace, bench/bridge_bench.py's ~90 KB host answer) with the reference host behind the
bridge, after its index is built (~1 min for 10 calls). `callgrind_annotate --inclusive=yes FILE` on the kept output
(`--out`) shows where the instructions go by C function (the JSON scanner, pydantic-core, the
interpreter).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from bridge_bench import BAD_HOST, bridge_inspect, bridge_serve_argv, bridge_status, warm_inspect
from raw_peer import initialize, load, spawned

WARM_UP = 20


async def measure(
    repo: Path, calls: int, out: Path, inspect: bool = False, sdk_alone: Path | None = None
) -> float:
    host = (
        [sys.executable, "-m", "reference_host"]
        if inspect
        else [sys.executable, str(BAD_HOST), "ok"]
    )
    call = bridge_inspect if inspect else bridge_status
    argv = [
        "valgrind",
        "-q",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        *(
            bridge_serve_argv(repo, host)
            if sdk_alone is None
            else [sys.executable, str(Path(__file__).with_name("sdk_floor.py")), str(sdk_alone)]
        ),
    ]
    async with spawned(argv, repo) as peer:
        with anyio.fail_after(600):
            await initialize(peer)
            if inspect:
                await warm_inspect(peer, True)
            for _ in range(3 if inspect else WARM_UP):
                await call(peer)
            pid = str(peer.process.pid)
            subprocess.run(["callgrind_control", "-i", "on", pid], capture_output=True, check=True)
            for _ in range(calls):
                await call(peer)
            subprocess.run(["callgrind_control", "-i", "off", pid], capture_output=True, check=True)
    for line in out.read_text().splitlines():  # written when the bridge exits
        if line.startswith("totals:"):
            return int(line.split()[1]) / calls
    raise RuntimeError(f"no totals in {out}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repo", default=str(Path.cwd()))
    parser.add_argument("--out", help="keep the callgrind output here")
    parser.add_argument(
        "--inspect", action="store_true", help="an asp_inspect page on the reference host"
    )
    parser.add_argument(
        "--sdk-alone",
        type=Path,
        metavar="RESULT.json",
        help="count bench/sdk_floor.py answering this saved result instead of the bridge",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp) / "callgrind.out"
        per_call = anyio.run(
            measure, Path(args.repo).resolve(), args.calls, out, args.inspect, args.sdk_alone
        )
    what = "asp_inspect page, reference host" if args.inspect else "asp_status, cheap host"
    if args.sdk_alone is not None:
        what = f"of the SDK alone answering {args.sdk_alone.name}"
    print(
        f"{per_call:,.0f} instructions per tools/call {what} (bridge only, {args.calls} calls) "
        f"· {load()}"
    )


if __name__ == "__main__":
    main()
