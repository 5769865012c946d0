"""Facts of Python blobs kept across provider restarts: a bounded cache in the user's cache directory.

Facts depend only on a blob's bytes and on the code that extracts them, so an entry is addressed by
the blob id alone, under a directory named after the provider's build fingerprint (another build
never reads it). The directory is the host's choice (`--cache-dir`, declared in the built-in
manifest's access expectations as `user-cache:`), never inside the workspace; the workspace is
never written. Every entry is checked before use (a digest of its payload, the blob id inside it);
anything unreadable, corrupt or from another format is a miss and is removed. The whole cache is
bounded in bytes: after each store the oldest entries (by last use) go until it is under the bound.
Deleting the directory at any time is safe: the next build parses again. Beside the facts, the
resolved index of a whole tree is kept under `index-<build>/` by the digest of its (path, blob id)
pairs (indexcache.py encodes it); the same bound covers both.

A hit saves the parse only: the provider still reads every blob through `workspace/readBlob`, so an
answer's `validAsOf.blobs` stays exactly what the host served this session.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import marshal
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

from reference_host.providers.pyindex.factmodel import (
    NO_NAMES,
    DefFact,
    ImportFact,
    ModuleFacts,
    Scope,
    Uses,
)

log = logging.getLogger("asp.python-inspect.cache")

T = TypeVar("T")

FORMAT = b"asp-facts/4\n"  # 4: alias bindings
DIGEST_BYTES = 16
SUFFIX = ".facts"
INDEX_SUFFIX = ".index"
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
PRUNE_TO = 0.9
STALE_TEMP_S = 3600.0  # prune down to this share of the bound, so not every store prunes


def seal(form: bytes, key: str, fields: tuple[Any, ...]) -> bytes:
    """An entry: its format line, the digest of its payload, then the payload, which marshals
    the *key* it is the entry of followed by *fields* (plain values only)."""
    payload = marshal.dumps((key, *fields))
    return form + hashlib.blake2b(payload, digest_size=DIGEST_BYTES).digest() + payload


def unseal(form: bytes, key: str, data: bytes) -> tuple[Any, ...] | None:
    """The fields of a sound entry of *key* in format *form*; None for anything else (another
    format, a digest that does not match, another key, a payload marshal cannot read)."""
    head = len(form)
    if not data.startswith(form) or len(data) < head + DIGEST_BYTES:
        return None
    digest, payload = data[head : head + DIGEST_BYTES], data[head + DIGEST_BYTES :]
    if hashlib.blake2b(payload, digest_size=DIGEST_BYTES).digest() != digest:
        return None
    try:
        raw = marshal.loads(payload)
    except (ValueError, TypeError, EOFError):
        return None
    if not isinstance(raw, tuple) or not raw or raw[0] != key:
        return None
    return raw[1:]


def open_entry(form: bytes, key: str, data: bytes, build: Callable[..., T | None]) -> T | None:
    """*build* applied to the fields of a sound entry of *key*; None for an unsound entry or for
    fields *build* cannot take (a wrong count or type raises, and is a miss like any other)."""
    fields = unseal(form, key, data)
    if fields is None:
        return None
    try:
        return build(*fields)
    except (ValueError, TypeError, EOFError, IndexError):
        return None


def encode(facts: ModuleFacts) -> bytes:
    """The entry for *facts*: format line, digest of the payload, marshalled plain tuples."""
    return seal(
        FORMAT,
        facts.blob,
        (
            [
                (
                    s.owner,
                    s.kind,
                    s.parent,
                    s.bindings,
                    None,  # declared_global matters only while collecting (format 1 kept it)
                    s.self_name,
                    s.class_scope,
                )
                for s in facts.scopes
            ],
            [
                (
                    d.qualname,
                    d.name,
                    d.kind,
                    d.span,
                    d.scope,
                    d.parent_scope,
                    d.shape,
                    d.bases,
                    d.returns,
                    d.returns_element,
                    d.attrs,
                )
                for d in facts.defs
            ],
            facts.uses.columns(),
            [(i.scope, i.module, i.level, i.name, i.span, i.type_only) for i in facts.imports],
            facts.all_names,
            facts.error,
            facts.lines,
        ),
    )


def decode(blob: str, data: bytes) -> ModuleFacts | None:
    """The facts of an entry, or None when it is not a sound entry of *blob* in this format."""

    def facts(
        scopes: Any, defs: Any, uses: Any, imports: Any, all_names: Any, error: Any, lines: Any
    ) -> ModuleFacts:
        return ModuleFacts(
            blob,
            [Scope(o, k, p, b, NO_NAMES, n, c) for o, k, p, b, _g, n, c in scopes],
            [
                DefFact(q, n, k, sp, sc, ps, sh, tuple(b), r, re, a)
                for q, n, k, sp, sc, ps, sh, b, r, re, a in defs
            ],
            Uses.from_columns(*uses),
            [ImportFact(*i) for i in imports],
            all_names,
            error,
            lines,
        )

    return open_entry(FORMAT, blob, data, facts)


class FactCache:
    """One provider build's entries under *root* (shared by every build, bounded as a whole)."""

    def __init__(self, root: Path, build: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = root
        build_name = hashlib.sha256(build.encode()).hexdigest()[:16]
        self.dir = root / ("facts-" + build_name)
        self.index_dir = root / ("index-" + build_name)
        self.max_bytes = max_bytes
        self.stats = {"hits": 0, "misses": 0, "stored": 0, "pruned": 0, "errors": 0}

    def entry_path(self, blob: str) -> Path | None:
        """Where *blob*'s entry lives; None for an id that is not a plain sha256 blob id."""
        algorithm, _, hexdigest = blob.removeprefix("blob:").partition(":")
        if algorithm != "sha256" or len(hexdigest) != 64 or not hexdigest.isalnum():
            return None
        return self.dir / hexdigest[:2] / (hexdigest + SUFFIX)

    def load_many(self, blobs: Iterable[str]) -> dict[str, ModuleFacts]:
        """Facts of the *blobs* the cache holds soundly; each hit counts as a use (mtime)."""
        out: dict[str, ModuleFacts] = {}
        for blob in blobs:
            path = self.entry_path(blob)
            if path is None:
                continue
            try:
                data = path.read_bytes()
            except OSError:
                self.stats["misses"] += 1
                continue
            facts = decode(blob, data)
            if facts is None:
                self.stats["errors"] += 1
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            with contextlib.suppress(OSError):
                os.utime(path)
            self.stats["hits"] += 1
            out[blob] = facts
        return out

    def store_many(
        self, facts: Iterable[ModuleFacts], encoded: Mapping[str, bytes] | None = None
    ) -> int:
        """Write entries for *facts* not yet held, then keep the cache within its bound;
        OSErrors only make the cache hold less. *encoded* holds entries already made (by the
        parse workers, `engine.parse_chunk`): written as they are, not encoded again."""
        stored = 0
        for item in facts:
            path = self.entry_path(item.blob)
            if path is None or path.exists():
                continue
            made = encoded.get(item.blob) if encoded is not None else None
            if not self.write_entry(path, made if made is not None else encode(item)):
                break
            stored += 1
        self.stats["stored"] += stored
        if stored:
            self.prune()
        return stored

    def write_entry(self, path: Path, data: bytes) -> bool:
        """Write one entry atomically (a temp file beside it, then a rename); False on OSError."""
        temp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, path)
            return True
        except (OSError, ValueError) as exc:
            log.info("inspect cache: cannot store %s: %s", path.name, exc)
            if temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
            return False

    def index_path(self, key: str) -> Path | None:
        """Where the resolved index of the tree with digest *key* lives (see indexcache.py)."""
        algorithm, _, hexdigest = key.partition(":")
        if algorithm != "sha256" or len(hexdigest) != 64 or not hexdigest.isalnum():
            return None
        return self.index_dir / (hexdigest + INDEX_SUFFIX)

    def holds_index(self, key: str) -> bool:
        """Whether an index entry of tree *key* exists (sound or not: reading it tells)."""
        path = self.index_path(key)
        return path is not None and path.is_file()

    def read_index(self, key: str) -> bytes | None:
        """The bytes of a tree's index entry (a use: its mtime is touched), or None."""
        path = self.index_path(key)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return data

    def drop_index(self, key: str) -> None:
        """Remove an index entry found unsound."""
        path = self.index_path(key)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def write_index(self, key: str, data: bytes) -> bool:
        path = self.index_path(key)
        if path is None or not self.write_entry(path, data):
            return False
        self.prune()
        return True

    def usage(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, path) of every entry of every build: only this cache's own files
        (`facts-*/??/*.facts`, `index-*/*.index`), whatever else the directory holds."""
        entries: list[tuple[float, int, Path]] = []
        found = chain(
            self.root.glob(f"facts-*/??/*{SUFFIX}"), self.root.glob(f"index-*/*{INDEX_SUFFIX}")
        )
        for full in found:
            try:
                info = full.stat()
            except OSError:
                continue
            entries.append((info.st_mtime, info.st_size, full))
        return entries

    def prune(self) -> None:
        """Remove the least recently used entries of every build until the cache is in bound,
        and temp files a killed provider left behind (older than an hour)."""
        stale = time.time() - STALE_TEMP_S
        temps = chain(self.root.glob("facts-*/??/.tmp-*"), self.root.glob("index-*/.tmp-*"))
        for temp in temps:
            with contextlib.suppress(OSError):
                if temp.stat().st_mtime < stale:
                    temp.unlink()
        entries = self.usage()
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        goal = int(self.max_bytes * PRUNE_TO)
        for _, size, full in sorted(entries):
            if total <= goal:
                break
            with contextlib.suppress(OSError):
                full.unlink()
                total -= size
                self.stats["pruned"] += 1
