"""Judging many files at once for the rules across files: on forked workers when there are many.

A release-sized change spells its removed names and changed functions in hundreds of files, and
each must be parsed and walked: one after the other in the provider's own process, that pushed
an evaluation past the gate's budget. `judged` hands the files to `WORKERS` forked processes in
chunks when there are at least `MIN_POOLED` of them, else to one worker thread, so the event
loop keeps answering the host (and its deadline) meanwhile. What the files are judged against
(the removed names, the resolver, ...) is a module-level value while the workers are forked:
they inherit it, and only paths and bytes travel to them.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import anyio

from reference_host.providers.check_pool import MIN_POOLED, WORKERS

T = TypeVar("T")
Files = list[tuple[str, bytes]]
CHUNK = 16
_CONTEXT: list[Any] = []  # the judge and what it judges against, while one is running


def _run(files: Files) -> list[Any]:
    judge, context = _CONTEXT[-1]
    return list(judge(files, context))


async def judged(files: Files, judge: Callable[[Files, Any], list[T]], context: Any) -> list[T]:
    """`judge(files, context)`, in order, off the event loop (see the module docstring)."""
    _CONTEXT.append((judge, context))
    try:
        if len(files) < MIN_POOLED or WORKERS < 2:
            return await anyio.to_thread.run_sync(_run, files, abandon_on_cancel=True)
        pool = ProcessPoolExecutor(
            WORKERS, mp_context=multiprocessing.get_context("fork"), initializer=gc.disable
        )
        try:
            futures = [pool.submit(_run, files[i : i + CHUNK]) for i in range(0, len(files), CHUNK)]
            out: list[T] = []
            for future in futures:
                out += await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
            return out
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    finally:
        _CONTEXT.pop()
