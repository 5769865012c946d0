"""Inspect on real PyPI packages through the real host (issue 15) — a plain script, not a test.

    python bench/inspect_real.py [--package django==5.2.19] [--runs 25] [--cache DIR]
        [--cold-verbs] [--cold-builds N]

For each package: the sdist is downloaded once with pip (`--no-deps --no-binary :all:`) into the
cache (default `~/.cache/asp-bench`, outside the repository, never committed), extracted and
committed to a git repository there. The host is built as `asp-host serve` builds it and runs the
real `asp-python-inspect` subprocess. Figures:

* cold: first `host/queryInspect` until the first complete answer (no degraded coverage: from
  part of the tree while the index builds, or from the whole index), polling every 100 ms while
  the provider answers "indexing", then until a `callees` answer (the whole index: an `impact` of
  unchanged files is answered from the import graph before it, pyindex/graph.py) — once with the
  provider's persistent cache emptied (a first index ever), once more in a new host and
  provider process with the cache warm (a restart: facts and the tree's resolved index read
  back); the cache lives in `<cache>/index-cache`;
* with `--cold-verbs`, the same per verb in a new host each (the cache emptied): the first
  complete answer of that verb asked first, and when the whole index answered;
* with `--cold-builds N`, N new hosts (the cache emptied) asked only for the whole index: the
  median, least and most seconds (one build varies by about a fifth from run to run on this
  2-vCPU machine), and the floor beside them: two processes that only `ast.parse` the package's
  Python files, about half the bytes each;
* warm p50/p90 per verb through the host (`symbols`/`references`/`callers` of one file's names,
  `impact` of one module), and the largest page in bytes, once the provider has written its cache
  (the steady state); apart from them, the p50 of `references` asked right after the first build,
  while the provider writes that cache (facts of every file, then the resolved index);
* CPU milliseconds per warm query of the host and of the provider (less bound to the load);
* resident memory of the host (this process) and the provider after the warm runs, and the
  provider's peak (VmHWM);
* `git grep -w NAME` on the same tree, and the ratio of warm `references` to it.

Where the cold build's time goes (per phase, per process: this provider, its parse workers, its
forked linking child; serial `ast.parse` / collection / resolving CPU-s, the load-independent
figures): `python bench/inspect_profile.py --package django==5.2.19` (same repositories, no host).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from bench_support import machine

from reference_host.cli import build_context
from reference_host.context import HostContext
from reference_host.inspect.query import query_inspect
from reference_host.trust.cache_dirs import CACHE_ENV

DEFAULT_PACKAGES = ("django==5.2.19", "salt==3008.5")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "asp-bench"
# one file per package whose names are queried: (path inside the sdist, symbol, method)
PROBES = {
    "django": ("django/core/paginator.py", "django.core.paginator.Paginator", "Paginator.page"),
    "salt": ("salt/utils/files.py", "salt.utils.files.fopen", "fopen"),
    "sympy": ("sympy/core/basic.py", "sympy.core.basic.Basic", "Basic.subs"),
}
COLD_LIMIT_S = 240.0
JUST_BUILT_RUNS = 10
PIP_DOWNLOAD = (sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:")


def _sdists(cache: Path, name: str, version: str) -> list[Path]:
    """The cached sdists of *name* *version*, matched as PyPI matches names (case, `-`, `_` and
    `.` alike): Django up to 5.1 and Flask up to 2.x publish `Django-5.1.4.tar.gz`."""

    def normal(text: str) -> str:
        return re.sub(r"[-_.]+", "-", text).lower()

    wanted = normal(f"{name}-{version}")
    return sorted(
        path for path in cache.glob("*.tar.gz") if normal(path.name[: -len(".tar.gz")]) == wanted
    )


def prepared_repo(spec: str, cache: Path) -> Path:
    """A git repository of the package's sdist, built once in *cache* (a build cut short
    before is started again)."""
    name, _, version = spec.partition("==")
    repo = cache / "repos" / f"{name}-{version}"
    if (repo / "TOP").is_file():
        return repo
    cache.mkdir(parents=True, exist_ok=True)
    sdists = _sdists(cache, name, version)
    if not sdists:
        subprocess.run([*PIP_DOWNLOAD, spec, "-d", str(cache)], check=True)
        sdists = _sdists(cache, name, version)
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    with tarfile.open(sdists[0]) as archive:
        archive.extractall(repo, filter="data")
    (top,) = list(repo.iterdir())
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(top)], check=True)
    subprocess.run([*git, "-C", str(top), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(top), "commit", "-qm", spec], check=True)
    (repo / "TOP").write_text(top.name)
    return repo


def work_tree(repo: Path) -> Path:
    return repo / (repo / "TOP").read_text().strip()


def rss_mib(pid: int | str = "self") -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def cpu_s(pid: int) -> float:
    """CPU seconds of a process and its reaped children (the parse workers)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ask(verb: str, **fields: Any) -> dict[str, Any]:
    return {"callSite": "interactive", "request": {"verb": verb, **fields}}


async def measure(ctx: HostContext, root: Path, package: str, runs: int) -> dict[str, Any]:
    path, symbol, method = PROBES[package]
    queries = {
        "symbols": ask("symbols", path=path),
        "references": ask("references", symbol=symbol),
        "callers": ask("callers", symbol=f"{path}::{method}"),
        "impact": ask("impact", paths=[path]),
    }
    started, host_cpu = time.perf_counter(), time.process_time()
    polls = 0
    while True:
        polls += 1
        first = await query_inspect(ctx, queries["references"])
        if first["coverage"]["ran"] and not first["coverage"]["degraded"]:
            break  # answered from the whole index (it may still span several pages)
        if time.perf_counter() - started > COLD_LIMIT_S:
            raise RuntimeError(f"no complete answer in {COLD_LIMIT_S} s: {first['coverage']}")
        await anyio.sleep(0.1)
    cold = time.perf_counter() - started
    index_s = await first_complete(ctx, whole_index(package), started)
    session = ctx.supervisor.record("asp-python-inspect").sessions["inspect"]
    assert session.process is not None
    results = first["data"]["results"]
    answer_data = results[0]["result"].get("data", {}) if results else {}
    out: dict[str, Any] = {
        "cold_s": cold,
        "index_s": index_s,
        "polls": polls,
        "index_from_cache": answer_data.get("indexFromCache"),
        "facts_from_cache": answer_data.get("factsFromCache"),
        "verbs": {},
        "cold_cpu_s": cpu_s(session.process.pid) + time.process_time() - host_cpu,
    }
    # the first answers after a first build compete with the provider writing its cache behind
    # them (facts of every file, then the resolved index): measured apart, then the steady state
    just_built = []
    for _ in range(JUST_BUILT_RUNS):
        t0 = time.perf_counter()
        await query_inspect(ctx, queries["references"])
        just_built.append((time.perf_counter() - t0) * 1000)
    out["just_built_p50"] = pct(just_built, 0.5)
    await cache_written(Path(os.environ[CACHE_ENV]))
    for verb, params in queries.items():
        times, largest, host_cpu = [], 0, 0.0
        provider_cpu = cpu_s(session.process.pid)
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            result = await query_inspect(ctx, params)
            times.append((time.perf_counter() - t0) * 1000)
            host_cpu += time.process_time() - c0
            largest = max(largest, len(json.dumps(result)))
        provider_cpu = cpu_s(session.process.pid) - provider_cpu
        answer = result["data"]["results"][0]["result"] if result["data"]["results"] else {}
        out["verbs"][verb] = {
            "p50": pct(times, 0.5),
            "p90": pct(times, 0.9),
            "bytes": largest,
            # CPU per query, less bound to the machine's load than the wall times
            "host_cpu_ms": host_cpu * 1000 / runs,
            "provider_cpu_ms": provider_cpu * 1000 / runs,
            "nodes": len(answer.get("nodes", [])),
            "exhaustive": result["coverage"]["exhaustive"],
            "pages_more": bool(answer.get("data", {}).get("page", {}).get("cursor")),
        }
    name = symbol.rpartition(".")[2]
    grep = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run(["git", "grep", "-w", "-c", name], cwd=root, capture_output=True)
        grep.append((time.perf_counter() - t0) * 1000)
    out["git_grep_ms"] = statistics.median(grep)
    out["host_rss"] = rss_mib()[0]
    out["provider_rss"], out["provider_peak"] = rss_mib(session.process.pid)
    return out


async def first_complete(ctx: HostContext, query: dict[str, Any], started: float) -> float:
    """Seconds from *started* to the first answer of *query* without degraded coverage."""
    while True:
        result = await query_inspect(ctx, query)
        if result["coverage"]["ran"] and not result["coverage"]["degraded"]:
            return time.perf_counter() - started
        if time.perf_counter() - started > COLD_LIMIT_S:
            raise RuntimeError(f"no complete answer in {COLD_LIMIT_S} s: {result['coverage']}")
        await anyio.sleep(0.1)


def cold_queries(package: str) -> dict[str, dict[str, Any]]:
    """The verbs whose first answer a cold provider may give before its whole index is built
    (symbols of one file; references / callers / symbols of a name from part of the tree)."""
    path, symbol, method = PROBES[package]
    return {
        "references": ask("references", symbol=symbol),
        "callers": ask("callers", symbol=f"{path}::{method}"),
        "symbols of a name": ask("symbols", query=method.rpartition(".")[2]),
        "symbols of a file": ask("symbols", path=path),
        "impact": ask("impact", paths=[path]),
    }


def whole_index(package: str) -> dict[str, Any]:
    """A query only the whole index answers: `callees` is never answered from part of the tree
    (early.py), nor from the import graph (graph.py)."""
    path, _symbol, method = PROBES[package]
    return ask("callees", symbol=f"{path}::{method}")


@contextlib.asynccontextmanager
async def cold_host(root: Path) -> AsyncIterator[HostContext]:
    """A new host (and, on its first query, a new provider) with the provider's cache emptied."""
    shutil.rmtree(Path(os.environ[CACHE_ENV]), ignore_errors=True)
    async with new_host(root) as ctx:
        yield ctx


@contextlib.asynccontextmanager
async def new_host(root: Path) -> AsyncIterator[HostContext]:
    """A host as `asp-host serve` builds it, in this process, shut down with its providers."""
    ctx = build_context(root, None, "advisory")
    async with anyio.create_task_group() as tg:
        ctx.supervisor.attach(tg)
        try:
            yield ctx
        finally:
            with anyio.CancelScope(shield=True):
                await ctx.supervisor.shutdown_all()
            tg.cancel_scope.cancel()


async def cold_per_verb(root: Path, package: str) -> dict[str, tuple[float, float]]:
    """Per verb, in a new host and provider with the cache emptied each time: (seconds to the
    first complete answer of that verb asked first, seconds until the whole index answered)."""
    out = {}
    for verb, query in cold_queries(package).items():
        async with cold_host(root) as ctx:
            started = time.perf_counter()
            first = await first_complete(ctx, query, started)
            out[verb] = (first, await first_complete(ctx, whole_index(package), started))
    return out


async def cold_builds(root: Path, package: str, builds: int) -> list[float]:
    """Seconds from the first query of a new host, the cache emptied, to the whole index's
    first answer with nothing else asked — *builds* times, since one build's time varies by a
    fifth from run to run on this machine."""
    out = []
    for _ in range(builds):
        async with cold_host(root) as ctx:
            out.append(await first_complete(ctx, whole_index(package), time.perf_counter()))
    return out


def _parse_only(blobs: list[bytes]) -> None:
    for data in blobs:
        with contextlib.suppress(SyntaxError, ValueError):
            ast.parse(data)


def parse_floor(root: Path) -> float:
    """Wall seconds for two processes to `ast.parse` the tree's Python blobs, about half the
    bytes each, and do nothing else: what an index built on CPython's own parser costs at the
    least on this machine and Python (no facts collected, nothing sent, nothing linked)."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "*.py"], cwd=root, capture_output=True, check=True
    ).stdout.split(b"\0")
    blobs = {(root / os.fsdecode(path)).read_bytes() for path in listing if path}
    halves: list[list[bytes]] = [[], []]
    for data in sorted(blobs, key=len, reverse=True):
        min(halves, key=lambda half: sum(map(len, half))).append(data)
    context = multiprocessing.get_context("fork")
    started = time.perf_counter()
    with context.Pool(2, initializer=gc.disable) as pool:
        pool.map(_parse_only, halves)
    return time.perf_counter() - started


async def cache_written(index_cache: Path, limit_s: float = 60.0) -> None:
    """Wait until the provider's cache (facts, then the resolved index) stops growing: it is
    written behind the first answer."""
    last, stable, started = -1, 0, time.perf_counter()
    while stable < 5 and time.perf_counter() - started < limit_s:
        count = len(list(index_cache.glob("*/facts-*/??/*.facts"))) + len(
            list(index_cache.glob("*/index-*/*.index"))
        )
        stable = stable + 1 if count == last else 0
        last = count
        await anyio.sleep(0.2)


async def run_host(root: Path, package: str, runs: int) -> dict[str, Any]:
    async with new_host(root) as ctx:
        result = await measure(ctx, root, package, runs)
        await cache_written(Path(os.environ[CACHE_ENV]))
    return result


async def run_package(
    spec: str, cache: Path, runs: int, per_verb: bool, builds: int
) -> dict[str, Any]:
    root = work_tree(prepared_repo(spec, cache))
    modules = int(
        subprocess.run(
            ["git", "ls-files", "*.py"], cwd=root, capture_output=True, text=True
        ).stdout.count("\n")
    )
    index_cache = cache / "index-cache"
    shutil.rmtree(index_cache, ignore_errors=True)
    os.environ[CACHE_ENV] = str(index_cache)
    package = spec.partition("==")[0]
    result = await run_host(root, package, runs)
    restart = await run_host(root, package, 1)
    verbs = await cold_per_verb(root, package) if per_verb else {}
    return {
        "cold_verbs": verbs,
        "cold_builds": await cold_builds(root, package, builds),
        "parse_floor_s": parse_floor(root) if builds else None,
        "package": spec,
        "modules": modules,
        **result,
        "restart_s": restart["cold_s"],
        "restart_cpu_s": restart["cold_cpu_s"],
        "restart_cached": (restart["facts_from_cache"], restart["index_from_cache"]),
    }


def report(rows: list[dict[str, Any]]) -> None:
    print(
        "| package | modules | cold → first complete answer | verb | warm p50 | warm p90 "
        "| largest page | ratio to `git grep -w` |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        for verb, figures in row["verbs"].items():
            ratio = (
                f"{figures['p50'] / row['git_grep_ms']:.2f}x ({row['git_grep_ms']:.0f} ms)"
                if verb == "references"
                else ""
            )
            print(
                f"| {row['package']} | {row['modules']} | {row['cold_s']:.1f} s "
                f"(restart {row['restart_s']:.1f} s) | {verb} "
                f"| {figures['p50']:.1f} ms | {figures['p90']:.1f} ms "
                f"| {figures['bytes'] / 1024:.0f} KiB | {ratio} |"
            )
    for row in rows:
        print(
            f"{row['package']}: CPU seconds (host + provider + parse workers) to the first "
            f"complete answer (cold: until the whole index answered): "
            f"cold {row['cold_cpu_s']:.1f}, restart {row['restart_cpu_s']:.1f} "
            f"(restart: facts of {row['restart_cached'][0]} files and the resolved index "
            f"{'from' if row['restart_cached'][1] else 'not from'} the cache)"
        )
        if "just_built_p50" in row:
            print(
                f"{row['package']}: references p50 right after the first build, while the "
                f"provider writes its cache: {row['just_built_p50']:.1f} ms"
            )
        print(
            f"{row['package']}: CPU ms per warm query (host + provider): "
            + ", ".join(
                f"{verb} {f['host_cpu_ms']:.1f} + {f['provider_cpu_ms']:.1f}"
                for verb, f in row["verbs"].items()
            )
        )
        print(
            f"{row['package']}: cold, the whole index answered after {row['index_s']:.1f} s "
            f"(the first complete references answer after {row['cold_s']:.1f} s)"
        )
        for verb, (first, whole) in row["cold_verbs"].items():
            print(
                f"{row['package']}: cold, {verb} asked first: complete after {first:.1f} s "
                f"(whole index {whole:.1f} s)"
            )
        if row["cold_builds"]:
            times = row["cold_builds"]
            print(
                f"{row['package']}: cold, whole index with nothing else asked, {len(times)} "
                f"builds: median {statistics.median(times):.1f} s (min {min(times):.1f}, max "
                f"{max(times):.1f}); two processes only running ast.parse on its Python files: "
                f"{row['parse_floor_s']:.1f} s"
            )
        print(
            f"{row['package']}: host RSS {row['host_rss']:.0f} MiB + provider RSS "
            f"{row['provider_rss']:.0f} MiB (provider peak {row['provider_peak']:.0f} MiB)"
        )
    print(f"machine: {machine()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", help="NAME==VERSION (repeatable)")
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument(
        "--cold-verbs",
        action="store_true",
        help="also a cold host per verb: its first complete answer when asked first",
    )
    parser.add_argument(
        "--cold-builds",
        type=int,
        default=0,
        metavar="N",
        help="also N cold hosts asked only for the whole index (median, min, max), and the "
        "ast.parse floor",
    )
    args = parser.parse_args(argv)
    rows = [
        anyio.run(run_package, spec, args.cache, args.runs, args.cold_verbs, args.cold_builds)
        for spec in args.package or DEFAULT_PACKAGES
    ]
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
