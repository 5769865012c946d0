"""Raw findings of the Python check kept by blob id, so an evaluation of files seen before
analyses nothing again (every blob is still read through the callbacks, so `validAsOf.blobs`
stays exact)."""

from __future__ import annotations

from collections import OrderedDict

import anyio

from reference_host.providers.python_rules import RawFinding, analyse

#: One analysis: (blob id, bytes, `verify.maxParameters`, whether it is a package's __init__.py)
Job = tuple[str, bytes, int | None, bool]


class FindingsCache:
    """Raw findings per (blob id, analysis settings, whether the file is a package's
    `__init__.py`), bounded LRU; otherwise path-free, so renames hit too. Findings a worker
    process made for this request (`prime`, check_pool.py) are not reported as cache hits."""

    def __init__(self, size: int = 4096) -> None:
        self._items: OrderedDict[tuple[str, int | None, bool], list[RawFinding]] = OrderedDict()
        self._size = size
        self._primed: set[tuple[str, int | None, bool]] = set()

    def missing(self, jobs: list[Job]) -> list[Job]:
        return [job for job in jobs if (job[0], job[2], job[3]) not in self._items]

    def prime(self, job: Job, found: list[RawFinding]) -> None:
        key = (job[0], job[2], job[3])
        self._items[key] = found
        self._primed.add(key)
        if len(self._items) > self._size:
            self._primed.discard(self._items.popitem(last=False)[0])

    async def findings(
        self, blob: str, data: bytes, max_parameters: int | None, package_init: bool = False
    ) -> tuple[list[RawFinding], bool]:
        key = (blob, max_parameters, package_init)
        if key in self._items:
            self._items.move_to_end(key)
            if key in self._primed:
                self._primed.discard(key)
                return self._items[key], False  # analysed for this request, by a worker
            return self._items[key], True
        found = await anyio.to_thread.run_sync(
            analyse, data, max_parameters, package_init, abandon_on_cancel=True
        )
        self._items[key] = found
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return found, False
