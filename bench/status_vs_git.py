"""`host/status` beside `git status --porcelain=v2` of the same work tree (issue 14: <= 1.2x).

Run through `python bench/host_bench.py --status-vs-git 1000,10000,50000`. For each size a
repository of small Python modules is generated with one `git fast-import` stream (a 50,000-file
tree takes seconds, not the minutes of per-file adds) and checked out; 50 files are then edited.
One real `asp-host serve` subprocess answers `host/status` to a blocking NDJSON client (one line
written, one line read: no client library counted), and `git status --porcelain=v2` runs as a
subprocess of this script; the two are timed alternately, call by call, so load swings hit both.
Beside the wall-clock p50s are the CPU milliseconds per call of the host process together with
its git children and of git alone (from `resource`/`/proc`), which the others' load moves less.
The host must leave the work tree as the bench wrote it (checked with `git status` after).

The host reuses a file's digest while its stat is unchanged, but never a digest taken less than
`RACY_NS` (2 s) after the file last changed (reference_host/repo/workfiles.py). The timed calls
therefore start once the 50 edits are older than that: the steady state of a client polling
status. With `--status-touch`, a second row on the same repository and host rewrites one of the
edited files (same size, new bytes) before every host call and every git call, so each call
meets a file changed since the last one, and a third adds a new file or removes it again before
every host call (the git call after it sees the same tree), so each host call's git answer
differs from its last one, and so does each git call's. (Until 1 December 22:58 UTC it flipped
before the git calls too, so every host call met the same tree as the one before and its guess
held.)

While git runs the host guesses the state from git's last answer (reference_host/repo/
gitstatus.py): the steady and touched rows are answered from the guess (git's bytes are the same;
the touched file is read again meanwhile), the added-or-removed row never is (its state is read
from git's answer after git, the cost of a guess git does not confirm).

Where the host's time goes, profiled on the 1,000-file repository: `host_status` called
in-process under cProfile with a CPU clock (its git child's CPU is not the host's; the JSON-RPC
endpoint and the answer's encoding are not in it — `asp_protocol/jsonrpc.py`):

    python bench/status_vs_git.py --profile 1000 OUT.pstats
    python -c "import pstats; pstats.Stats('OUT.pstats').sort_stats('tottime').print_stats(30)"
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_repo import build_repo, changed_files, repo_files

#: Edits older than the host's racy margin (RACY_NS, 2 s) before the timed calls start.
SETTLE_S = 2.5
Row = dict[str, float]


class NdjsonHost:
    """`python -m reference_host serve` spoken to with one blocking line per request and answer."""

    def __init__(self, repo: Path, trusted: Path) -> None:
        argv = [sys.executable, "-m", "reference_host", "serve", "--repo", str(repo)]
        argv += ["--trusted-dir", str(trusted)]
        env = {k: v for k, v in os.environ.items() if k != "ASP_HOST_TRUSTED_DIR"}
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=repo.parent
        )
        self.ids = 0

    def call(self, method: str, params: Any) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        if "result" not in reply:
            raise RuntimeError(f"{method}: {reply.get('error')}")
        return reply["result"]

    def cpu_s(self) -> float:
        """User + system CPU seconds of the host and its reaped children (its git runs)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(action: Callable[[], Any], samples: list[float]) -> None:
    started = time.perf_counter()
    action()
    samples.append((time.perf_counter() - started) * 1000)


class Toucher:
    """Rewrites one edited file in place, same size, new bytes each time (`--status-touch`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = bytearray(path.read_bytes())
        self.count = 0

    def __call__(self) -> None:
        self.count += 1
        self.data[-2] = ord("0") + self.count % 10  # the digit of the edit's `return 1`
        self.path.write_bytes(bytes(self.data))


class Flipper:
    """Adds a new file, or removes it again, before each host call (the third `--status-touch`
    row); called before the git call too, it leaves the tree as the host call saw it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls % 2 == 0:
            return  # before the git call: the tree the host call just read
        if self.path.exists():
            self.path.unlink()
        else:
            self.path.write_text("NEW = 1\n")


def _alternate(host: NdjsonHost, git: list[str], runs: int, before: Callable[[], None]) -> Row:
    host_ms: list[float] = []
    git_ms: list[float] = []
    host_cpu, git_cpu = 0.0, 0.0
    for _ in range(runs):
        before()
        cpu = host.cpu_s()
        _timed(lambda: host.call("host/status", {}), host_ms)
        host_cpu += host.cpu_s() - cpu
        before()
        cpu = _children_cpu_s()
        _timed(lambda: subprocess.run(git, capture_output=True, check=True), git_ms)
        git_cpu += _children_cpu_s() - cpu
    return {
        "host": statistics.median(host_ms),
        "git": statistics.median(git_ms),
        "host_cpu": host_cpu * 1000 / runs,
        "git_cpu": git_cpu * 1000 / runs,
    }


def one_size(size: int, changed: int, runs: int, touch: bool) -> dict[str, Row]:
    """Both p50s (and CPU ms per call) on one freshly built *size*-file repository: the steady
    row, and with *touch* the row where a file changes before every call."""
    with tempfile.TemporaryDirectory(prefix="asp-status-bench-") as tmp:
        repo, trusted = Path(tmp) / "repo", Path(tmp) / "trusted"
        trusted.mkdir()
        started = time.perf_counter()
        build_repo(repo, size, changed)
        edited = time.time()
        setup_s = time.perf_counter() - started
        before = subprocess.run(["git", "status", "--porcelain=v2"], cwd=repo, capture_output=True)
        host = NdjsonHost(repo, trusted)
        rows: dict[str, Row] = {}
        try:
            for _ in range(2):
                host.call("host/status", {})
            time.sleep(max(0.0, edited + SETTLE_S - time.time()))
            git = ["git", "-C", str(repo), "status", "--porcelain=v2"]
            rows["steady"] = _alternate(host, git, runs, lambda: None)
            if touch:
                first = next(iter(changed_files(repo_files(size), changed)))
                rows["touched"] = _alternate(host, git, runs, Toucher(repo / first))
                flipper = Flipper(repo / "pkg" / "added_or_removed.py")
                rows["added or removed"] = _alternate(host, git, runs, flipper)
                if flipper.path.exists():
                    flipper.path.unlink()
        finally:
            code = host.stop()
        after = subprocess.run(["git", "status", "--porcelain=v2"], cwd=repo, capture_output=True)
        if code != 0 or after.stdout != before.stdout:
            raise RuntimeError("the host exited badly or changed the work tree")
    for row in rows.values():
        row["setup_s"] = setup_s
    return rows


def status_vs_git(sizes: list[int], changed: int, runs: int, touch: bool = False) -> None:
    """Print the table, one row per repository size (two with *touch*)."""
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        "| files | host/status p50 ms | git status --porcelain=v2 p50 ms | ratio "
        "| host CPU ms/call (with its git) | git CPU ms/call | set-up s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        for name, row in one_size(size, changed, runs, touch).items():
            label = f"{size}" if name == "steady" else f"{size}, a file {name} before each call"
            print(
                f"| {label} | {row['host']:.1f} | {row['git']:.1f} "
                f"| {row['host'] / row['git']:.2f}x | {row['host_cpu']:.1f} "
                f"| {row['git_cpu']:.1f} | {row['setup_s']:.1f} |",
                flush=True,
            )
        print(f"  (load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def profile(size: int, changed: int, out: Path, calls: int = 300) -> None:
    """`host_status` in-process under cProfile with a CPU clock, on a settled *size*-file repo."""
    import cProfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from reference_host.cli import build_context
    from reference_host.status.results import host_status

    with tempfile.TemporaryDirectory(prefix="asp-status-profile-") as tmp:
        repo = Path(tmp) / "repo"
        build_repo(repo, size, changed)
        time.sleep(SETTLE_S)
        ctx = build_context(repo, None, "advisory")
        for _ in range(5):
            host_status(ctx, {})
        started = time.process_time()
        for _ in range(calls):
            host_status(ctx, {})
        cpu_ms = (time.process_time() - started) * 1000 / calls
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(calls):
            host_status(ctx, {})
        profiler.disable()
        profiler.dump_stats(out)
    print(f"host_status in-process: {cpu_ms:.2f} ms CPU/call without the profiler (its git not")
    print(f"counted), load {os.getloadavg()[0]:.2f}; profile of {calls} calls in {out}")


if __name__ == "__main__":
    assert sys.argv[1] == "--profile", "usage: status_vs_git.py --profile SIZE OUT.pstats"
    profile(int(sys.argv[2]), 50, Path(sys.argv[3]))
