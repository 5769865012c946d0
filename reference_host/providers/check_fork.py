"""Work over many files for the Python check, on forked workers when there are many.

pyflakes and the parses of the rules across files hold the interpreter lock, so one provider
process does one file at a time: on this 2-core machine the Django 5.1.4 -> 5.2.19 release diff
as one change (540 changed modules, hundreds of importers to judge) passed the gate's 30 s
budget. `judged` hands the items to `WORKERS` forked processes in chunks when there are at least
`MIN_POOLED` of them, else to one worker thread, so the event loop keeps answering the host (and
its deadline) meanwhile. What the items are judged against (the removed names, the resolver, ...)
is a module-level value while the workers are forked: they inherit it, and only the items (paths,
blob ids, bytes) travel to them. A request cut short stops waiting; what the workers hold already
finishes and is dropped with the pool.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import anyio

Item = TypeVar("Item")
T = TypeVar("T")
MIN_POOLED = 40  # items below this: one thread, a pool costs more than it saves
WORKERS = min(2, os.cpu_count() or 1)
_CONTEXT: list[Any] = []  # the judge and what it judges against, while one is running


def _run(items: list[Any]) -> list[Any]:
    judge, context = _CONTEXT[-1]
    return list(judge(items, context))


async def judged(
    items: list[Item],
    judge: Callable[[list[Item], Any], list[T]],
    context: Any,
    *,
    chunk: int = 16,
    progress: Callable[[int], Awaitable[None]] | None = None,
) -> list[T]:
    """`judge(items, context)`, in order, off the event loop (see the module docstring);
    *progress*, on the workers, is told how many items are done after each chunk."""
    _CONTEXT.append((judge, context))
    try:
        if len(items) < MIN_POOLED or WORKERS < 2:
            return await anyio.to_thread.run_sync(_run, items, abandon_on_cancel=True)
        pool = ProcessPoolExecutor(
            WORKERS, mp_context=multiprocessing.get_context("fork"), initializer=gc.disable
        )
        try:
            futures = [
                (pool.submit(_run, items[i : i + chunk]), min(i + chunk, len(items)))
                for i in range(0, len(items), chunk)
            ]
            out: list[T] = []
            for future, done in futures:
                out += await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
                if progress is not None:
                    await progress(done)
            return out
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    finally:
        _CONTEXT.pop()
