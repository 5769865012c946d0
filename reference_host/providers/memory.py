"""Giving freed C-heap memory back to the system, for the built-in providers and the host.

Reading a large repository frees far more than it keeps: blob bytes, the JSON and base64 of each
`workspace/readBlob` batch, the pickles parse workers send back. glibc keeps such freed memory
mapped, so a process's resident size stays at its peak long after the work (on Salt's 3,000
modules the host sat at 125-185 MiB where 105 MiB were live). `malloc_trim` returns it; where
there is no glibc this does nothing. It lives with the providers (whose build fingerprint covers
only this package and the wire layer); the host imports it from here.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

#: Blob bytes a host serves between two trims: a trim walks the heap (a few ms on a large one), so
#: it runs a few times per index build, never per small request.
TRIM_EVERY_BYTES = 8 * 1024 * 1024

_trim: Any = None


def release_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc `malloc_trim(0)`)."""
    global _trim
    if _trim is None:
        try:
            _trim = ctypes.CDLL(None).malloc_trim  # the process's own libc: nothing is launched
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


class HeapTrimmer:
    """Counts the bytes a process moved for others and says when a trim is due."""

    def __init__(self, every: int = TRIM_EVERY_BYTES) -> None:
        self.every = every
        self.pending = 0
        self.trims = 0
        self._lock = threading.Lock()

    def due(self, moved: int = 0, at_least: int | None = None) -> bool:
        """Count *moved* bytes; True, and the count starts again, once *at_least* (by default
        `every`) bytes have moved since the last trim."""
        with self._lock:
            self.pending += moved
            if self.pending < (self.every if at_least is None else at_least):
                return False
            self.pending = 0
            self.trims += 1
            return True

    async def trim_if_due(self, moved: int = 0, at_least: int | None = None) -> None:
        """`release_free_memory` in a worker thread when `due` (a large trim takes tens of ms)."""
        if self.due(moved, at_least):
            await anyio.to_thread.run_sync(release_free_memory)


class IdleTrimmer:
    """Trims once requests have stopped for *quiet* seconds: a burst of large answers (an agent
    paging through a big `references`) leaves its garbage behind, and the quiet after the burst
    is when giving it back costs nobody a wait."""

    def __init__(
        self, quiet: float = 1.0, sleep: Callable[[float], Awaitable[None]] = anyio.sleep
    ) -> None:
        self.quiet = quiet
        self._sleep = sleep  # a test steps the quiet period with its own
        self.trims = 0
        self._requests = 0
        self._armed = False
        self._tg: TaskGroup | None = None

    def attach(self, tg: TaskGroup) -> None:
        self._tg = tg

    def answered(self) -> None:
        """A request was answered: (re)start the quiet period."""
        self._requests += 1
        if not self._armed and self._tg is not None:
            self._armed = True
            self._tg.start_soon(self._trim_when_quiet)

    async def _trim_when_quiet(self) -> None:
        seen = -1
        while seen != self._requests:
            seen = self._requests
            await self._sleep(self.quiet)
        self._armed = False
        self.trims += 1
        await anyio.to_thread.run_sync(release_free_memory)


#: The host's one trimmer: the blob bytes it serves to providers count toward it.
HOST_HEAP = HeapTrimmer()
