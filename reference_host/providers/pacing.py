"""Progress of a provider's long loop over files, paced for the host.

The host takes a request whose progress message keeps changing for a slow provider, not a hung
one, and does not count its deadline toward quarantine (reference_host/sessions/building.py). So
a loop reports every tenth of its items and at least once a second, whichever comes first: a
tenth of a large change can take longer than the whole request's budget.
"""

from __future__ import annotations

import time

from reference_host.providers.runtime import Call

EVERY_S = 1.0
MIN_ITEMS = 20  # a shorter loop reports nothing


class Paced:
    """Reports `index/total files` for one request's loop (see the module docstring)."""

    def __init__(self, call: Call, total: int) -> None:
        self._call, self._total = call, total
        self._step = max(1, total // 10)
        self._last = time.monotonic()

    async def at(self, index: int) -> None:
        if self._total < MIN_ITEMS:
            return
        if index % self._step and time.monotonic() - self._last < EVERY_S:
            return
        self._last = time.monotonic()
        await self._call.progress(
            percentage=index * 100 // self._total, message=f"{index}/{self._total} files"
        )
