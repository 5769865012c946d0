"""The per-file analysis (pyflakes) of a large change on both cores.

pyflakes holds the interpreter lock, so one provider process analyses one file at a time. When a
request has at least `check_fork.MIN_POOLED` files to analyse that are not in the findings cache,
they are analysed first on the forked workers (`check_fork.judged`), in chunks, in order, and
their raw findings go into the cache; the evaluation's own loop then reads them from there,
exactly as if it had analysed them itself (a file a worker could not analyse is left to that
loop, which says why). The workers read nothing: the bytes come with each chunk.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from reference_host.providers.check_fork import MIN_POOLED, WORKERS, judged
from reference_host.providers.check_reads import Target, needed_blobs
from reference_host.providers.findings_cache import FindingsCache, Job
from reference_host.providers.python_rules import (
    PACKAGE_INIT,
    RawFinding,
    analyse,
)

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


def _analyse_chunk(chunk: list[Job], _: None) -> list[tuple[Job, list[RawFinding] | None]]:
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

    async def told(done: int) -> None:
        await progress(done * targets // len(todo))

    primed = 0
    for job, found in await judged(todo, _analyse_chunk, None, chunk=CHUNK, progress=told):
        if found is not None:
            cache.prime(job, found)
            primed += 1
    return primed
