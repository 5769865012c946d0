"""Facts for many blobs: read through the host in batches, from memory, the persistent cache or a
parse, with the host's next batch read while this process works on the current one.

A readBlob batch costs the host (git objects, JSON) about as much as this process spends decoding
and loading or parsing it; asked one after the other the two processes take turns and a restart
takes their sum. So the next batch is requested as soon as the current one has arrived: at most one
readBlob is outstanding at a time (the host's per-session budget counts the same calls), and the
facts produced are the same, batch by batch, as reading in turn would produce.

Parsing is most of a first build, so blobs go to the worker processes in small chunks as each
batch arrives, and the facts they send back (marshalled cache entries, `engine.parse_chunk`) are
unpacked here while the workers parse the rest; small chunks keep both workers busy to the end.
"""

from __future__ import annotations

import functools
import gc
import logging
import multiprocessing
import os
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ProcessPoolExecutor

import anyio

from asp_protocol.errors import AspError
from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.pyindex.diskcache import FactCache
from reference_host.providers.pyindex.engine import InspectEngine, parse_chunk, unpack_chunk
from reference_host.providers.pyindex.facts import ModuleFacts
from reference_host.providers.pyindex.words import Packed

log = logging.getLogger("asp.python-inspect.build")

READ_BATCH = 256
PARSE_WORKERS = min(2, os.cpu_count() or 1)
MIN_POOL_BLOBS = 200  # below this a pool costs more than it saves
POOL_CHUNK = 32
CHUNK_BYTES = 96 * 1024  # about 40 ms of parsing: a chunk ends at this much source (or 32 blobs)

Batch = tuple[dict[str, bytes], dict[str, AspError]]


def chunks(served: dict[str, bytes]) -> list[list[tuple[str, bytes]]]:
    """A batch in parse chunks of about `CHUNK_BYTES` (at most `POOL_CHUNK` blobs), the largest
    blobs first: the chunks left when the last batch arrives are then small and even, so neither
    worker waits long for the other at the end."""
    out: list[list[tuple[str, bytes]]] = []
    part: list[tuple[str, bytes]] = []
    size = 0
    for blob, data in sorted(served.items(), key=lambda item: -len(item[1])):
        part.append((blob, data))
        size += len(data)
        if size >= CHUNK_BYTES or len(part) >= POOL_CHUNK:
            out.append(part)
            part, size = [], 0
    if part:
        out.append(part)
    return out


class Seen:
    """What one build's reads delivered, for answers before its index is done (early.py): the
    bytes of every blob read (kept until the build ends), the refused ones, how many had facts in
    the persistent cache, how many were not read at all (their facts already in memory)."""

    def __init__(self) -> None:
        self.data = Packed()
        self.refused: set[str] = set()
        self.cached = 0
        self.unread = 0
        self.read = anyio.Event()  # every batch has arrived (and its cached facts are counted)
        # while the parse workers have chunks not yet started: have these blobs parsed first
        # (called in the event loop's thread)
        self.prioritize: Callable[[AbstractSet[str]], None] | None = None

    def release(self) -> None:
        self.data = Packed()


class _Ahead:
    """One batch being read in the background: its result, or the exception the read raised."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: Batch | None = None
        self.error: Exception | None = None

    async def run(self, read: Callable[[], Awaitable[Batch]]) -> None:
        try:
            self.value = await read()
        except Exception as exc:  # handed to the consumer, raised there as it would be in turn
            self.error = exc
        finally:
            self.done.set()

    async def result(self) -> Batch:
        await self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.value is not None
        return self.value


async def read_facts(
    engine: InspectEngine,
    callbacks: HostCallbacks,
    blobs: list[str],
    advance: Callable[[int], None] | None = None,
    batch: int = READ_BATCH,
    workers: int = 0,
    cache: FactCache | None = None,
    fresh: list[ModuleFacts] | None = None,
    seen: Seen | None = None,
    encoded: dict[str, bytes] | None = None,
) -> dict[str, ModuleFacts]:
    """Facts for *blobs*, reading the uncached ones in batches; refused blobs are just absent.

    Every blob not in memory is read from the host; its facts then come from the persistent
    *cache* when it holds them, else from a parse, which is appended to *fresh* (for the caller to
    store). With *workers* > 1 and enough blobs to parse, parsing runs in that many worker
    processes (the bytes travel to them from this process; they read nothing themselves), and
    the cache entries they made are kept in *encoded* by blob (stored as they are, see
    `FactCache.store_many`).
    *advance* is told how many more blobs are done as they are; *seen* is told what was read.
    """
    out: dict[str, ModuleFacts] = {}
    wanted = []
    for blob in dict.fromkeys(blobs):
        facts = engine.facts(blob)
        if facts is not None:
            out[blob] = facts
        else:
            wanted.append(blob)

    def step(size: int) -> None:
        if advance is not None and size:
            advance(size)

    step(len(out))
    if seen is not None:
        seen.unread = len(out)
    starts = list(range(0, len(wanted), batch))
    if not starts:
        return out
    pooled = workers > 1 and len(wanted) >= MIN_POOL_BLOBS
    pool: ProcessPoolExecutor | None = None
    pending: list[Future[list[tuple[str, bytes]]]] = []
    parts: dict[Future[list[tuple[str, bytes]]], list[tuple[str, bytes]]] = {}

    def counted(size: int, future: Future[list[tuple[str, bytes]]]) -> None:
        if not future.cancelled() and not future.exception():
            step(size)

    def submit(part: list[tuple[str, bytes]]) -> None:
        assert pool is not None
        future = pool.submit(parse_chunk, part, engine.max_file_bytes)
        future.add_done_callback(functools.partial(counted, len(part)))
        parts[future] = part
        pending.append(future)

    def prioritize(blobs: AbstractSet[str]) -> None:
        """Send the chunks not yet started again, those holding *blobs* first: the same blobs
        are parsed into the same facts, in another order (early.py waits for these)."""
        waiting = [future for future in pending if future.cancel()]
        if not waiting:
            return
        pending[:] = [future for future in pending if not future.cancelled()]
        items = [item for future in waiting for item in parts.pop(future)]
        first = dict(item for item in items if item[0] in blobs)
        rest = dict(item for item in items if item[0] not in blobs)
        for part in [*chunks(first), *chunks(rest)]:
            submit(part)

    def adopt(done: list[Future[list[tuple[str, bytes]]]]) -> None:
        """Unpack finished chunks, in the order they were sent (waiting for the first)."""
        for future in done:
            entries = future.result()
            for (_blob, entry), facts in zip(entries, unpack_chunk(entries), strict=True):
                out[facts.blob] = engine.add_parsed(facts)
                if fresh is not None:
                    fresh.append(facts)
                    if encoded is not None:
                        encoded[facts.blob] = entry

    async def harvest(everything: bool) -> None:
        """Unpack the chunks the workers finished (all of them, waiting, when *everything*):
        the first waited for and every finished one after it in one hop to a thread, since a
        hop per chunk cost this process as much as unpacking them."""
        while pending and (everything or pending[0].done()):
            done = [pending.pop(0)]
            while pending and pending[0].done():
                done.append(pending.pop(0))
            for future in done:
                parts.pop(future, None)
            await anyio.to_thread.run_sync(adopt, done)

    failed: Exception | None = None
    try:
        async with anyio.create_task_group() as tg:
            try:
                ahead = _Ahead()
                tg.start_soon(ahead.run, functools.partial(callbacks.read_each, wanted[:batch]))
                for following in [*starts[1:], None]:
                    served, refused = await ahead.result()
                    if following is not None:  # the host reads the next batch meanwhile
                        ahead, chunk = _Ahead(), wanted[following : following + batch]
                        tg.start_soon(ahead.run, functools.partial(callbacks.read_each, chunk))
                    if refused:
                        log.info("host refused %d blob(s)", len(refused))
                    step(len(refused))
                    if seen is not None:
                        seen.data.add(served)
                        seen.refused.update(refused)
                    if cache is not None and served:
                        held = await anyio.to_thread.run_sync(cache.load_many, list(served))
                        for blob, facts in held.items():
                            out[blob] = engine.add_cached(facts)
                            del served[blob]
                        step(len(held))
                        if seen is not None:
                            seen.cached += len(held)
                    if pool is None and pooled and len(served) >= POOL_CHUNK:
                        pool = ProcessPoolExecutor(
                            workers,
                            mp_context=multiprocessing.get_context("fork"),
                            initializer=gc.disable,
                        )
                        if seen is not None:
                            seen.prioritize = prioritize
                    if pool is None:
                        parsed = await anyio.to_thread.run_sync(
                            lambda s=served: {b: engine.add_blob(b, d) for b, d in s.items()}  # type: ignore[misc]
                        )
                        out.update(parsed)
                        if fresh is not None:
                            fresh.extend(parsed.values())
                        step(len(served))
                        continue
                    for part in chunks(served):
                        submit(part)
                    await harvest(False)
                if seen is not None:
                    seen.read.set()
            except Exception as exc:  # raised below, as itself (not in an exception group)
                failed = exc
                tg.cancel_scope.cancel()
        if failed is not None:
            raise failed
        await harvest(True)
    finally:
        if seen is not None:
            seen.prioritize = None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
    return out
