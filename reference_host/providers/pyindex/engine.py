"""The cached analysis engine: facts per blob id, whole indexes per tree.

A tree is the set of (path, blob id) pairs of the Python files; the same tree (an unchanged
baseline) reuses its index outright, and a changed tree re-parses only blobs never seen before.
The engine never reads anything itself: the caller supplies bytes for the blobs `missing()` names.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from asp_protocol.canonical import blob_id, digest
from asp_protocol.framing import UnencodableMessage, compact_json
from reference_host.providers.pyindex.diskcache import decode, encode
from reference_host.providers.pyindex.facts import ModuleFacts, Scope, Uses, parse_facts
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.linking import Links
from reference_host.providers.pyindex.modules import is_python_path

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024


class BlobMismatch(ValueError):
    """Bytes supplied for a blob id do not hash to it: the content cannot be trusted."""


def named_tree(entries: dict[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """(the entries whose path and blob id have a UTF-8 form, a printable form of each other path).

    A string with a lone surrogate (a JSON `\\udcXX` escape from the host, e.g. for a file name
    that was not UTF-8) cannot be written in any answer the host accepts, nor in a `readBlob`
    request (`framing.compact_json` refuses it, and so does every page measure), so its file is
    left out of the index; answers list it in `data.incomplete.unnamable` and are not exhaustive."""
    try:
        compact_json(entries)
        return entries, ()
    except UnencodableMessage:
        pass
    named: dict[str, str] = {}
    unnamable: list[str] = []
    for path, blob in entries.items():
        try:
            compact_json([path, blob])
        except UnencodableMessage:
            unnamable.append(path.encode("utf-8", "backslashreplace").decode("utf-8"))
            continue
        named[path] = blob
    return named, tuple(sorted(unnamable))


def python_tree(entries: Mapping[str, str]) -> dict[str, str]:
    """The Python part of a `{path: blob id}` listing, the only part the index depends on."""
    return {path: blob for path, blob in entries.items() if is_python_path(path)}


@dataclass(frozen=True)
class Listing:
    """A baseline's Python files as the host listed them, keyed for the build cache."""

    key: str
    tree: dict[str, str]
    truncated: bool
    unnamable: tuple[str, ...]  # listed paths with no UTF-8 form, left out (`named_tree`)

    @classmethod
    def of(cls, key: str, entries: dict[str, str], truncated: bool) -> Listing:
        """The listing of *entries* (every file the host listed: path -> blob id)."""
        tree, unnamable = named_tree(python_tree(entries))
        return cls(key, tree, truncated, unnamable)


TOO_LARGE = "skipped: file too large"


def checked_facts(blob: str, data: bytes, max_file_bytes: int) -> ModuleFacts:
    """The facts of *data* after checking that it hashes to *blob* (BlobMismatch otherwise)."""
    if blob_id(data) != blob:
        raise BlobMismatch(f"content for {blob} hashes to {blob_id(data)}")
    if len(data) > max_file_bytes:
        return ModuleFacts(blob, [Scope("", "module", -1)], [], Uses(), [], error=TOO_LARGE)
    return parse_facts(blob, data)


def parse_chunk(items: list[tuple[str, bytes]], max_file_bytes: int) -> list[tuple[str, bytes]]:
    """`checked_facts` of many blobs, the unit of work sent to a parse worker process, each as
    its (blob id, marshalled cache entry): a few byte strings cross the process boundary
    instead of a pickled graph of small objects (half the CPU on both sides, see diskcache)."""
    return [(blob, encode(checked_facts(blob, data, max_file_bytes))) for blob, data in items]


def unpack_chunk(entries: list[tuple[str, bytes]]) -> list[ModuleFacts]:
    """The facts of a parse worker's `parse_chunk` result (it made the entries itself)."""
    out = []
    for blob, data in entries:
        facts = decode(blob, data)
        if facts is None:  # cannot happen short of a broken worker: never an empty success
            raise ValueError(f"parse worker returned an unreadable entry for {blob}")
        out.append(facts)
    return out


class InspectEngine:
    """Parse once per blob, index once per tree; counters in `stats` prove the reuse."""

    def __init__(
        self,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_facts: int = 100_000,
        max_indexes: int = 4,
    ) -> None:
        self.max_file_bytes = max_file_bytes
        self.max_facts = max_facts
        self.max_indexes = max_indexes
        self._facts: OrderedDict[str, ModuleFacts] = OrderedDict()
        self._indexes: OrderedDict[str, PythonIndex] = OrderedDict()
        self.stats: dict[str, int] = {
            "parsed": 0,
            "cacheHits": 0,
            "indexBuilds": 0,
            "indexHits": 0,
            "indexLoads": 0,
        }
        self._mutex = threading.Lock()  # a background build and a request may parse at once

    def missing(self, tree: Mapping[str, str]) -> list[str]:
        """Blob ids of *tree* whose facts are not cached yet (each listed once)."""
        wanted = {blob for blob in tree.values() if blob not in self._facts}
        return sorted(wanted)

    def add_blob(self, blob: str, data: bytes) -> ModuleFacts:
        """Parse *data* as the content of *blob*, after checking that it hashes to that id."""
        with self._mutex:
            return self._add_blob(blob, data)

    def _add_blob(self, blob: str, data: bytes) -> ModuleFacts:
        cached = self._facts.get(blob)
        if cached is not None:
            return cached
        return self._store(checked_facts(blob, data, self.max_file_bytes))

    def add_cached(self, facts: ModuleFacts) -> ModuleFacts:
        """Adopt facts read back from the persistent cache (see diskcache.py): not a parse."""
        with self._mutex:
            if facts.blob in self._facts:
                return self._facts[facts.blob]
            self.stats["cacheHits"] += 1
            self._facts[facts.blob] = facts
            while len(self._facts) > self.max_facts:
                self._facts.popitem(last=False)
            return facts

    def add_parsed(self, facts: ModuleFacts) -> ModuleFacts:
        """Adopt facts made by `checked_facts` elsewhere (a parse worker process)."""
        with self._mutex:
            return self._facts.get(facts.blob) or self._store(facts)

    def _store(self, facts: ModuleFacts) -> ModuleFacts:
        if facts.error != TOO_LARGE:
            self.stats["parsed"] += 1
        self._facts[facts.blob] = facts
        while len(self._facts) > self.max_facts:
            self._facts.popitem(last=False)
        return facts

    def facts(self, blob: str) -> ModuleFacts | None:
        return self._facts.get(blob)

    def index(
        self,
        tree: Mapping[str, str],
        cached: Callable[[str], Links | None] | None = None,
        cores: int = 1,
        graph: Callable[[PythonIndex], None] | None = None,
    ) -> PythonIndex:
        """The index of *tree*; every blob must have been added (see `missing`). When it is not
        in memory, *cached* may supply its resolved tables by the tree's key (`tree_key`);
        otherwise they are resolved in up to *cores* processes (forklink.py), and *graph* is
        given the index once its import graph is whole, before its uses are linked."""
        with self._mutex:
            return self._index(tree, cached, cores, graph)

    @staticmethod
    def tree_key(tree: Mapping[str, str]) -> str:
        """The digest of a tree's sorted (path, blob id) pairs: what its index depends on."""
        return digest(sorted(tree.items()))

    def _index(
        self,
        tree: Mapping[str, str],
        cached: Callable[[str], Links | None] | None,
        cores: int,
        graph: Callable[[PythonIndex], None] | None = None,
    ) -> PythonIndex:
        key = self.tree_key(tree)
        found = self._indexes.get(key)
        if found is not None:
            self._indexes.move_to_end(key)
            self.stats["indexHits"] += 1
            return found
        files: dict[str, tuple[str, ModuleFacts]] = {}
        for path, blob in tree.items():
            facts = self._facts.get(blob)
            if facts is None:
                raise KeyError(f"no content for {blob} ({path})")
            files[path] = (blob, facts)
        links = cached(key) if cached is not None else None
        built = PythonIndex(files, links=links, cores=cores, graph=graph)
        self.stats["indexBuilds" if links is None else "indexLoads"] += 1
        self._indexes[key] = built
        while len(self._indexes) > self.max_indexes:
            self._indexes.popitem(last=False)
        return built

    def index_sources(self, sources: Mapping[str, bytes]) -> PythonIndex:
        """In-process convenience (tests, benchmarks): index `{path: bytes}` directly."""
        tree = {}
        for path, data in sources.items():
            if not is_python_path(path):
                continue
            blob = blob_id(data)
            self.add_blob(blob, data)
            tree[path] = blob
        return self.index(tree)

    def describe(self) -> dict[str, Any]:
        return {**self.stats, "cachedBlobs": len(self._facts), "cachedIndexes": len(self._indexes)}
