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

from bench_repo import build_repo


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


def one_size(size: int, changed: int, runs: int) -> dict[str, float]:
    """Both p50s (and CPU ms per call) on one freshly built *size*-file repository."""
    with tempfile.TemporaryDirectory(prefix="asp-status-bench-") as tmp:
        repo, trusted = Path(tmp) / "repo", Path(tmp) / "trusted"
        trusted.mkdir()
        started = time.perf_counter()
        build_repo(repo, size, changed)
        setup_s = time.perf_counter() - started
        before = subprocess.run(["git", "status", "--porcelain=v2"], cwd=repo, capture_output=True)
        host = NdjsonHost(repo, trusted)
        try:
            for _ in range(2):
                host.call("host/status", {})
            git = ["git", "-C", str(repo), "status", "--porcelain=v2"]
            host_ms: list[float] = []
            git_ms: list[float] = []
            host_cpu, git_cpu = 0.0, 0.0
            for _ in range(runs):
                cpu = host.cpu_s()
                _timed(lambda: host.call("host/status", {}), host_ms)
                host_cpu += host.cpu_s() - cpu
                cpu = _children_cpu_s()
                _timed(lambda: subprocess.run(git, capture_output=True, check=True), git_ms)
                git_cpu += _children_cpu_s() - cpu
        finally:
            code = host.stop()
        after = subprocess.run(["git", "status", "--porcelain=v2"], cwd=repo, capture_output=True)
        if code != 0 or after.stdout != before.stdout:
            raise RuntimeError("the host exited badly or changed the work tree")
    return {
        "host": statistics.median(host_ms),
        "git": statistics.median(git_ms),
        "host_cpu": host_cpu * 1000 / runs,
        "git_cpu": git_cpu * 1000 / runs,
        "setup_s": setup_s,
    }


def status_vs_git(sizes: list[int], changed: int, runs: int) -> None:
    """Print the table, one row per repository size."""
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        "| files | host/status p50 ms | git status --porcelain=v2 p50 ms | ratio "
        "| host CPU ms/call (with its git) | git CPU ms/call | set-up s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        row = one_size(size, changed, runs)
        print(
            f"| {size} | {row['host']:.1f} | {row['git']:.1f} | {row['host'] / row['git']:.2f}x "
            f"| {row['host_cpu']:.1f} | {row['git_cpu']:.1f} | {row['setup_s']:.1f} |",
            flush=True,
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
