"""An index linked in a thread, told to the event loop as soon as its import graph is whole.

`impact` of files whose content does not change (`paths`: the same blob before and after) reads
the tree's files and its import graph only (impact.py: no definition changed, so no callers are
looked up), and linking resolves every file's imports before any use (forklink.py). So while the
uses are still being linked, such an answer can already be given from the index, and it is the
answer the finished index gives (tests compare them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio

from reference_host.providers.pyindex.index import PythonIndex

Graph = Callable[[PythonIndex], None]


async def linked(
    index: Callable[[Graph], PythonIndex], told: Graph, ready: anyio.Event
) -> PythonIndex:
    """`index(graph)` run in a thread; when it calls `graph`, *told* is given the index there
    and *ready* is set on the event loop. The thread does not wait for the loop (which may
    itself be waiting for the engine's lock that thread holds): a second thread relays."""
    whole = threading.Event()
    made: list[PythonIndex] = []

    def graph(built: PythonIndex) -> None:
        told(built)
        made.append(built)
        whole.set()

    async def relay() -> None:
        await anyio.to_thread.run_sync(whole.wait)
        if made:
            ready.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        try:
            built = await anyio.to_thread.run_sync(index, graph)
        finally:
            whole.set()
    return built
