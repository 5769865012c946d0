"""The per-file analysis of a large change on both cores.

pyflakes holds the interpreter lock, so one provider process analyses one file at a time: on
this 2-core machine the 547 Python files of the Django 5.1.4 -> 5.2.19 release, as one change,
were 540 done when the gate's 30 s budget ran out, and the evaluation was `indeterminate`. When a
request has at least `MIN_POOLED` files to analyse that are not in the findings cache, they are
analysed first by `WORKERS` forked processes, in chunks, in order, and their raw findings go into
the cache; the evaluation's own loop then reads them from there, exactly as if it had analysed
them itself (a file a worker could not analyse is left to that loop, which says why).

The workers are forked from this process (the rules, settings and interpreter are the same) and
read nothing: the bytes come with each chunk. A request cut short stops submitting; what the
workers hold already finishes and is dropped with the pool.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor

import anyio

from reference_host.providers.check_reads import Target, needed_blobs
from reference_host.providers.findings_cache import FindingsCache, Job
from reference_host.providers.python_rules import (
    PACKAGE_INIT,
    RawFinding,
    analyse,
)

MIN_POOLED = 40
WORKERS = min(2, os.cpu_count() or 1)
CHUNK = 8


def analysis_jobs(
    targets: list[Target],
    served: dict[str, bytes],
    comparison: str,
    max_bytes: int,
    max_parameters: int | None,
) -> list[Job]:
    """The (blob, bytes, settings, package init) analyses the evaluation's loop will ask for."""
    jobs: dict[tuple[str, int | None, bool], Job] = {}
    for target in targets:
        init = target.path.rpartition("/")[2] == PACKAGE_INIT
        for _, blob in needed_blobs(target, comparison):
            data = served.get(blob)
            if data is not None and len(data) <= max_bytes:
                jobs.setdefault((blob, max_parameters, init), (blob, data, max_parameters, init))
    return list(jobs.values())


def _analyse_chunk(chunk: list[Job]) -> list[tuple[Job, list[RawFinding] | None]]:
    out: list[tuple[Job, list[RawFinding] | None]] = []
    for job in chunk:
        blob, data, max_parameters, init = job
        try:
            out.append(((blob, b"", max_parameters, init), analyse(data, max_parameters, init)))
        except Exception:  # the evaluation's own loop analyses it again and says why it failed
            out.append(((blob, b"", max_parameters, init), None))
    return out


async def analyse_many(
    cache: FindingsCache,
    jobs: list[Job],
    progress: Callable[[int], Awaitable[None]],
    targets: int,
) -> int:
    """Prime *cache* with the findings of the *jobs* it lacks, on the worker processes; how many
    were analysed there (0: too few to be worth a pool, or one core). *progress* is told how
    far it got in the evaluation's *targets* (its loop's own count)."""
    todo = cache.missing(jobs)
    if len(todo) < MIN_POOLED or WORKERS < 2:
        return 0
    pool = ProcessPoolExecutor(
        WORKERS, mp_context=multiprocessing.get_context("fork"), initializer=gc.disable
    )
    done = 0
    try:
        futures = [
            pool.submit(_analyse_chunk, todo[i : i + CHUNK]) for i in range(0, len(todo), CHUNK)
        ]
        for future in futures:
            for job, found in await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True):
                if found is not None:
                    cache.prime(job, found)
                    done += 1
            await progress(done * targets // max(1, len(todo)))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return done
