"""Background index builds of the inspect provider, one per tree, not bound to any request.

A request that finds no finished index for its tree starts (or joins) the build and waits for it
only a short grace (`wait`); a build still running then makes the request answer at once with a
typed "indexing" refusal that says how far it got, while the build goes on in the provider's own
task group. The build reads through a session-level callback client, which the host serves from the
session's standing baseline scope (README, inspect section), so a request timing out does not stop it.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from asp_protocol.errors import AspError, ConnectionClosed, ErrorCode, ProtocolViolation
from asp_protocol.errors import RequestTimeout as _RequestTimeout
from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.memory import release_free_memory
from reference_host.providers.pyindex.diskcache import FactCache
from reference_host.providers.pyindex.engine import (
    TOO_LARGE,
    BlobMismatch,
    InspectEngine,
)
from reference_host.providers.pyindex.facts import ModuleFacts
from reference_host.providers.pyindex.forklink import in_child
from reference_host.providers.pyindex.graph import linked
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.indexcache import load_links, store_links
from reference_host.providers.pyindex.linking import Links
from reference_host.providers.pyindex.reading import PARSE_WORKERS, READ_BATCH, Seen, read_facts

if TYPE_CHECKING:
    from reference_host.providers.runtime import ProviderRuntime

log = logging.getLogger("asp.python-inspect.build")

MAX_BUILDS = 4
CACHE_WRITE_GRACE_S = 120.0  # a healthy child writes Salt's whole cache in about two seconds
INDEXING = "indexing"


_paused = 0


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while facts and an index are built, then freeze what was built.

    A build allocates millions of small long-lived objects (facts, references); with the collector
    on, each generation-2 pass walks all of them again, which made building and unpickling facts
    several times slower than the parse itself. What a build makes is freed by reference counting
    when an index or facts are evicted, so freezing it (`gc.freeze`) only keeps the collector from
    walking it again; nested and concurrent builds share one pause.
    """
    global _paused
    if _paused == 0:
        gc.disable()
    _paused += 1
    try:
        yield
    finally:
        _paused -= 1
        if _paused == 0:
            gc.freeze()
            gc.enable()
            release_free_memory()


async def _first(one: anyio.Event, other: anyio.Event) -> None:
    """Wait until either event is set."""
    async with anyio.create_task_group() as tg:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(wait, one)
        tg.start_soon(wait, other)


class Prepared:
    """The index a request is answered from, and what could not be read into it."""

    def __init__(
        self,
        index: PythonIndex,
        tree: dict[str, str],
        unreadable: list[str],
        truncated: bool,
        from_cache: int = 0,
        index_from_cache: bool = False,
        unnamable: tuple[str, ...] = (),
    ) -> None:
        self.index = index
        self.tree = tree
        self.unreadable = unreadable
        self.tree_truncated = truncated
        self.from_cache = from_cache  # files whose facts the persistent cache supplied
        self.index_from_cache = index_from_cache  # its resolved tables too (indexcache.py)
        self.unnamable = unnamable  # listed paths with no UTF-8 form, left out (engine.named_tree)

    @property
    def incomplete(self) -> bool:
        return bool(self.unreadable) or self.tree_truncated or bool(self.unnamable)

    def blobs(self, paths: set[str]) -> list[str]:
        return sorted({self.tree[p] for p in paths if p in self.tree})


class Build:
    """One tree's build: progress counters, then the prepared index or the error that stopped it."""

    def __init__(
        self, tree: dict[str, str], truncated: bool, unnamable: tuple[str, ...] = ()
    ) -> None:
        self.tree = tree
        self.truncated = truncated
        self.unnamable = unnamable
        self.total = len(set(tree.values()))
        self.parsed = 0
        self.done = anyio.Event()
        self.prepared: Prepared | None = None
        self.error: AspError | None = None
        self.fresh: list[ModuleFacts] = []  # parsed by this build, not yet in the persistent cache
        self.encoded: dict[str, bytes] = {}  # their cache entries the parse workers already made
        self.fresh_links: tuple[str, Links] | None = None  # resolved by it, likewise
        self.seen = Seen()  # what its reads delivered (early answers, early.py)
        # whether the persistent cache held no resolved index of the whole tree when the build
        # started (None: not looked yet); the build then resolves it without looking again, so
        # an early answer knows the index will not come from the cache
        self.index_uncached: bool | None = None
        self.part: Any = None  # early.Part, made by the first early answer
        # the index being linked, once its import graph is whole (an `impact` that reads only
        # that is answered from it, the answer the finished index gives), and when it is
        self.graph: Prepared | None = None
        self.graph_ready = anyio.Event()

    def advance(self, size: int) -> None:
        """*size* more blobs read (parsed, loaded from the cache, or refused)."""
        self.parsed = min(self.total, self.parsed + size)

    def progress(self) -> tuple[int, str]:
        """(percentage, message) for `$/progress` and for the "indexing" refusal's detail."""
        percentage = 100 * self.parsed // self.total if self.total else 100
        stage = "resolving names" if self.parsed >= self.total else "parsing"
        return percentage, (
            f"{INDEXING}: {self.parsed} of {self.total} Python files parsed ({percentage}%, {stage})"
        )


class CacheWrite:
    """What a finished build made that the persistent cache does not hold yet, taken from it:
    facts it parsed (with the entries the parse workers made) and its resolved index."""

    def __init__(self, build: Build) -> None:
        self.fresh = [f for f in build.fresh if f.error != TOO_LARGE]
        self.encoded = build.encoded
        self.links = build.fresh_links
        build.fresh, build.encoded, build.fresh_links = [], {}, None

    def write(self, cache: FactCache) -> bool:
        if self.fresh:
            cache.store_many(self.fresh, self.encoded)
        if self.links is not None:
            store_links(cache, *self.links)
        return True


def write_behind(cache: FactCache, job: CacheWrite) -> None:
    """Write *job* into *cache* from a forked child, then free it here and give the memory back.

    Encoding a tree's resolved index and thousands of entries allocates and frees tens of MiB;
    done in this process, after a build, that garbage stayed mapped among the index's objects
    (Salt: about 17 MiB more resident for good). The child shares the facts copy-on-write and
    exits when done; where there is no fork, or the child fails, this process writes instead
    (entries the child did write are skipped: `store_many` keeps what exists)."""
    if not (job.fresh or job.links):
        return
    if (
        not hasattr(os, "fork")
        or in_child(lambda: job.write(cache), CACHE_WRITE_GRACE_S) is not True
    ):
        job.write(cache)
    job.fresh, job.encoded, job.links = [], {}, None
    release_free_memory()


BUILD_CALLBACK_TIMEOUT_S = 60.0  # a build's own reads, long after the request that started it


def session_callbacks(runtime: ProviderRuntime) -> Callable[[], HostCallbacks]:
    """The callbacks a build reads through once its request has ended (`Builds.attach`): the
    session's endpoint, with the build's own timeout."""

    def callbacks() -> HostCallbacks:
        assert runtime.endpoint is not None
        return HostCallbacks(runtime.endpoint, timeout=BUILD_CALLBACK_TIMEOUT_S)

    return callbacks


class Builds:
    """The provider's builds by tree key; a finished one is reused until evicted (LRU, bounded)."""

    def __init__(
        self,
        engine: InspectEngine,
        *,
        wait: float,
        hold_requests: int = 0,
        read_batch: int = READ_BATCH,
        cache: FactCache | None = None,
        hold_index: bool = False,
    ) -> None:
        self.engine = engine
        self.hold_index = hold_index  # test-only: a build never gets past reading its tree
        self.cache = cache
        self.wait = wait
        self.read_batch = read_batch
        self._builds: OrderedDict[str, Build] = OrderedDict()
        self._tg: TaskGroup | None = None
        self._callbacks: Callable[[], HostCallbacks] | None = None
        # test-only: the build stays at 0 files until this many requests have asked for it
        self._hold_requests = hold_requests
        self._asked = 0
        self._released = anyio.Event()
        if hold_requests <= 0:
            self._released.set()

    def attach(self, tg: TaskGroup, callbacks: Callable[[], HostCallbacks]) -> None:
        self._tg = tg
        self._callbacks = callbacks

    def reading(self, key: str) -> Build | None:
        """The running build of *key* once it has read every blob of its tree, none refused,
        none left unread and no resolved index in the cache: what an early answer needs."""
        build = self._builds.get(key)
        if build is None or build.done.is_set() or not build.seen.read.is_set():
            return None
        seen = build.seen
        if seen.refused or seen.unread or build.index_uncached is not True:
            return None
        return build

    def finished(self, key: str) -> Prepared | None:
        build = self._builds.get(key)
        if build is not None and build.prepared is not None:
            self._builds.move_to_end(key)
            return build.prepared
        return None

    async def prepared(
        self,
        key: str,
        tree: dict[str, str],
        truncated: bool,
        report: Callable[[int, str], Any],
        unnamable: tuple[str, ...] = (),
        *,
        until_read: bool = False,
        wait: float | None = None,
        graph: bool = False,
    ) -> Prepared:
        """The finished index of *tree*, waiting at most `wait` seconds (or *wait*) for a running
        build, and with *until_read* no longer than until it has read its tree; with *graph*, the
        index still being linked once its import graph is whole (`Build.graph`) will do. Raises
        the retryable "indexing" refusal (with the progress in its detail) when it is not ready."""
        build = self._builds.get(key)
        if build is None or (build.done.is_set() and build.prepared is None):
            build = Build(tree, truncated, unnamable)
            self._builds[key] = build
            while len(self._builds) > MAX_BUILDS:
                self._builds.popitem(last=False)
            assert self._tg is not None, "builds not attached to the provider's task group"
            self._tg.start_soon(self._run, build)
        self._builds.move_to_end(key)
        if not build.done.is_set():
            self._asked += 1
            if self._asked >= self._hold_requests:
                self._released.set()
            await report(*build.progress())
            with anyio.move_on_after(self.wait if wait is None else wait):
                while not build.done.is_set():
                    if until_read and self.reading(key) is build:
                        break
                    if graph and build.graph is not None:
                        break
                    early = until_read and not build.seen.read.is_set()
                    other = build.seen.read if early else build.graph_ready if graph else build.done
                    with anyio.move_on_after(0.5):
                        await _first(build.done, other)
                    if not build.done.is_set():
                        await report(*build.progress())
        if build.prepared is not None:
            return build.prepared
        if graph and build.graph is not None:
            return build.graph
        if build.error is not None:
            raise build.error
        raise AspError(
            ErrorCode.HEALTH_NOT_READY, INDEXING, retryable=True, detail=build.progress()[1]
        )

    async def _run(self, build: Build) -> None:
        try:
            await self._released.wait()
            with collector_paused():
                build.prepared = await self._build(build)
            build.done.set()  # answer from it now; the cache is written behind
            build.seen.release()
            build.part = build.graph = None
            if self.cache is not None:
                await anyio.to_thread.run_sync(write_behind, self.cache, CacheWrite(build))
        except (ProtocolViolation, BlobMismatch) as exc:
            build.error = AspError(
                ErrorCode.INTERNAL_ERROR, "host-callback-malformed", detail=str(exc)[:300]
            )
        except (_RequestTimeout, ConnectionClosed) as exc:
            build.error = AspError(
                ErrorCode.HEALTH_NOT_READY,
                "host-callback-failed",
                retryable=True,
                detail=str(exc)[:300],
            )
        except AspError as exc:
            build.error = exc
        except (RecursionError, MemoryError) as exc:
            build.error = AspError(
                ErrorCode.INTERNAL_ERROR, "index-build-failed", detail=type(exc).__name__
            )
        finally:
            build.done.set()
            build.seen.release()
            build.part = build.graph = None

    async def _build(self, build: Build) -> Prepared:
        assert self._callbacks is not None
        callbacks = self._callbacks()
        whole_key = self.engine.tree_key(build.tree)
        build.index_uncached = self.cache is None or not await anyio.to_thread.run_sync(
            self.cache.holds_index, whole_key
        )
        facts = await read_facts(
            self.engine,
            callbacks,
            list(build.tree.values()),
            build.advance,
            self.read_batch,
            PARSE_WORKERS,
            self.cache,
            build.fresh,
            build.seen,
            build.encoded,
        )
        if self.hold_index:
            await anyio.sleep_forever()
        readable = {p: b for p, b in build.tree.items() if b in facts}
        unreadable = sorted(set(build.tree) - set(readable))
        build.parsed = build.total
        loaded: list[bool] = []

        def cached(key: str) -> Links | None:
            looked = self.cache is not None and not (key == whole_key and build.index_uncached)
            links = load_links(self.cache, key) if self.cache is not None and looked else None
            loaded.append(links is not None)
            return links

        hits = build.seen.cached

        def graph(index: PythonIndex) -> None:
            build.graph = Prepared(
                index, readable, unreadable, build.truncated, hits, False, build.unnamable
            )

        index = await linked(
            lambda told: self.engine.index(readable, cached, PARSE_WORKERS, told),
            graph,
            build.graph_ready,
        )
        if loaded == [False]:  # resolved here: kept for the next provider, behind the answer
            build.fresh_links = (self.engine.tree_key(readable), index.links)
        log.info("indexed %d files (%d unreadable)", len(readable), len(unreadable))
        return Prepared(
            index, readable, unreadable, build.truncated, hits, loaded == [True], build.unnamable
        )
