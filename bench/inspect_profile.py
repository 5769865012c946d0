"""Where a cold inspect index spends its time, per phase and per process — a plain script, not a test.

    python bench/inspect_profile.py [--package django==5.2.19] [--cache DIR]

Uses the package repository `bench/inspect_real.py` prepares (sdist cached outside the repository)
and runs the provider's own build code in this process, without the host: blobs are handed over in
readBlob-sized batches from memory, so the figures are the provider's alone. Printed:

* serial, one core: `ast.parse` of every blob, then the whole fact collection (parse + collect),
  and the index resolved in turn — CPU seconds, the load-independent figures;
* the build as the provider runs it (`read_facts` with the parse workers, then the index with the
  forked linking helper, collector paused): wall time and CPU seconds of this process, of the
  parse workers and of the linking child, phase by phase.

CPU seconds of other processes are read from `RUSAGE_CHILDREN` once they are reaped, so each phase
waits for its children to end. Run alone on the machine when you can, and print `uptime` beside.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import multiprocessing
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from bench_support import machine
from inspect_real import CACHE, prepared_repo, work_tree

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.build import collector_paused
from reference_host.providers.pyindex.facts import parse_facts
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.reading import PARSE_WORKERS, READ_BATCH, read_facts


class MemoryHost:
    """`read_each` of the host callbacks over blobs already in memory."""

    def __init__(self, content: dict[str, bytes]) -> None:
        self.content = content

    async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, AspError]]:
        await anyio.sleep(0)
        return {i: self.content[i] for i in ids}, {}


def cpu() -> tuple[float, float]:
    """(this process, its reaped children) CPU seconds."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def reap() -> None:
    """Wait until the parse workers have exited and been reaped (their CPU is then counted)."""
    while multiprocessing.active_children():
        time.sleep(0.01)


def serial(tree: dict[str, str], content: dict[str, bytes]) -> dict[str, float]:
    with collector_paused():
        started = time.process_time()
        for data in content.values():
            with contextlib.suppress(SyntaxError, ValueError):
                ast.parse(data)
        parsed = time.process_time()
        facts = {blob: parse_facts(blob, data) for blob, data in content.items()}
        collected = time.process_time()
        PythonIndex({path: (blob, facts[blob]) for path, blob in tree.items()})
        linked = time.process_time()
    return {
        "ast.parse": parsed - started,
        "parse + collect": collected - parsed,
        "index (one core)": linked - collected,
    }


async def pipeline(tree: dict[str, str], content: dict[str, bytes]) -> dict[str, Any]:
    engine = InspectEngine()
    wall, (own, kids) = time.perf_counter(), cpu()
    with collector_paused():
        await read_facts(engine, MemoryHost(content), list(tree.values()), None, READ_BATCH, 2)  # type: ignore[arg-type]
        read_wall = time.perf_counter()
        reap()
        after_read = cpu()
        index_started = time.perf_counter()
        index = await anyio.to_thread.run_sync(lambda: engine.index(tree, None, PARSE_WORKERS))
        done_wall, done = time.perf_counter(), cpu()
    return {
        "facts wall": read_wall - wall,
        "facts CPU here": after_read[0] - own,
        "facts CPU parse workers": after_read[1] - kids,
        "index wall": done_wall - index_started,
        "index CPU here": done[0] - after_read[0],
        "index CPU linking child": done[1] - after_read[1],
        "total wall (less the reaping wait)": read_wall - wall + done_wall - index_started,
        "references": len(index.links.refs),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="django==5.2.19", help="NAME==VERSION")
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    root = work_tree(prepared_repo(args.package, args.cache))
    listing = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    sources = {path: (root / path).read_bytes() for path in listing if path}
    tree = {path: blob_id(data) for path, data in sources.items()}
    content = {blob: sources[path] for path, blob in tree.items()}
    print(
        f"{args.package}: {len(tree)} files, {len(content)} blobs, "
        f"{sum(map(len, content.values())) / 1e6:.1f} MB"
    )
    for label, value in serial(tree, content).items():
        print(f"  serial {label}: {value:.2f} CPU-s")
    for label, value in anyio.run(pipeline, tree, content).items():
        print(
            f"  build {label}: {value:.2f}" if isinstance(value, float) else f"  {label}: {value}"
        )
    print(f"  machine: {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
