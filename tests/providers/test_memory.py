"""Freed heap memory goes back to the system (reference_host/providers/memory.py)."""

from __future__ import annotations

import ctypes.util
import sys
from collections.abc import Callable

import anyio
import pytest

from reference_host.providers.memory import HeapTrimmer, IdleTrimmer, release_free_memory


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or ctypes.util.find_library("c") is None,
    reason="malloc_trim is glibc's",
)
def test_release_returns_fragmented_free_memory() -> None:
    # 2 KiB objects come from the C heap; keeping one in 16 leaves free pages between live ones,
    # which glibc never returns by itself (only a free top of the heap is trimmed on free).
    chunks = [bytes(2048 - 33) for _ in range(60_000)]
    kept = chunks[::16]
    del chunks
    before = _rss_mib()
    release_free_memory()
    after = _rss_mib()
    assert len(kept) == 3750
    assert before - after > 30, (before, after)


def test_a_trim_is_due_once_per_threshold() -> None:
    trimmer = HeapTrimmer(every=1000)
    due = [trimmer.due(300) for _ in range(9)]
    assert due == [False, False, False, True, False, False, False, True, False]
    assert trimmer.pending == 300
    assert not trimmer.due(at_least=301)  # nothing moved, not enough pending
    assert trimmer.due(at_least=300) and trimmer.pending == 0 and trimmer.trims == 3


@pytest.mark.anyio
async def test_the_idle_trim_waits_for_a_quiet_period_after_the_last_answer() -> None:
    periods: list[anyio.Event] = []

    async def one_period(_seconds: float) -> None:  # each quiet period ends when the test says
        periods.append(anyio.Event())
        await periods[-1].wait()

    async def until(condition: Callable[[], bool]) -> None:
        while not condition():
            await anyio.lowlevel.checkpoint()

    trimmer = IdleTrimmer(sleep=one_period)
    async with anyio.create_task_group() as tg:
        trimmer.attach(tg)
        trimmer.answered()
        trimmer.answered()  # one waiter, however many answers
        await until(lambda: len(periods) == 1)
        trimmer.answered()  # an answer during the quiet period: it starts again
        periods[0].set()
        await until(lambda: len(periods) == 2)
        assert trimmer.trims == 0
        periods[1].set()
        await until(lambda: trimmer.trims == 1)
        trimmer.answered()  # the next burst arms it anew
        await until(lambda: len(periods) == 3)
        periods[2].set()
        await until(lambda: trimmer.trims == 2)
