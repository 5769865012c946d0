"""Facts of Python blobs kept across provider restarts: a bounded cache in the user's cache directory.

Facts depend only on a blob's bytes and on the code that extracts them, so an entry is addressed by
the blob id alone, under a directory named after the provider's build fingerprint (another build
never reads it). The directory is the host's choice (`--cache-dir`, declared in the built-in
manifest's access expectations as `user-cache:`), never inside the workspace; the workspace is
never written. Every entry is checked before use (a digest of its payload, the blob id inside it);
anything unreadable, corrupt or from another format is a miss and is removed. The whole cache is
bounded in bytes: after each store the oldest entries (by last use) go until it is under the bound.
Deleting the directory at any time is safe: the next build parses again.

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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reference_host.providers.pyindex.factmodel import (
    DefFact,
    ImportFact,
    ModuleFacts,
    Scope,
    UseFact,
)

log = logging.getLogger("asp.python-inspect.cache")

FORMAT = b"asp-facts/1\n"
DIGEST_BYTES = 16
SUFFIX = ".facts"
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
PRUNE_TO = 0.9
STALE_TEMP_S = 3600.0  # prune down to this share of the bound, so not every store prunes


def encode(facts: ModuleFacts) -> bytes:
    """The entry for *facts*: format line, digest of the payload, marshalled plain tuples."""
    payload = marshal.dumps(
        (
            facts.blob,
            [
                (
                    s.owner,
                    s.kind,
                    s.parent,
                    s.bindings,
                    set(s.declared_global),
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
            [(u.scope, u.chain, u.kind, u.span) for u in facts.uses],
            [(i.scope, i.module, i.level, i.name, i.span, i.type_only) for i in facts.imports],
            facts.all_names,
            facts.error,
            facts.lines,
        )
    )
    return FORMAT + hashlib.blake2b(payload, digest_size=DIGEST_BYTES).digest() + payload


def decode(blob: str, data: bytes) -> ModuleFacts | None:
    """The facts of an entry, or None when it is not a sound entry of *blob* in this format."""
    head = len(FORMAT)
    if not data.startswith(FORMAT) or len(data) < head + DIGEST_BYTES:
        return None
    digest, payload = data[head : head + DIGEST_BYTES], data[head + DIGEST_BYTES :]
    if hashlib.blake2b(payload, digest_size=DIGEST_BYTES).digest() != digest:
        return None
    try:
        raw: Any = marshal.loads(payload)
        stored, scopes, defs, uses, imports, all_names, error, lines = raw
        if stored != blob:
            return None
        return ModuleFacts(
            blob,
            [Scope(o, k, p, b, set(g), n, c) for o, k, p, b, g, n, c in scopes],
            [DefFact(*d) for d in defs],
            [UseFact(*u) for u in uses],
            [ImportFact(*i) for i in imports],
            all_names,
            error,
            lines,
        )
    except (ValueError, TypeError, EOFError):
        return None


class FactCache:
    """One provider build's entries under *root* (shared by every build, bounded as a whole)."""

    def __init__(self, root: Path, build: str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = root
        self.dir = root / ("facts-" + hashlib.sha256(build.encode()).hexdigest()[:16])
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

    def store_many(self, facts: Iterable[ModuleFacts]) -> int:
        """Write entries for *facts* not yet held (atomically: a temp file, then a rename), then
        keep the cache within its bound; OSErrors only make the cache hold less."""
        stored = 0
        for item in facts:
            path = self.entry_path(item.blob)
            if path is None or path.exists():
                continue
            temp: str | None = None
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
                with os.fdopen(handle, "wb") as out:
                    out.write(encode(item))
                os.replace(temp, path)
                stored += 1
            except (OSError, ValueError) as exc:
                log.info("facts cache: cannot store %s: %s", item.blob, exc)
                if temp is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(temp)
                break
        self.stats["stored"] += stored
        if stored:
            self.prune()
        return stored

    def usage(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, path) of every entry of every build: only this cache's own files
        (`facts-*/??/*.facts`), whatever else the directory holds."""
        entries: list[tuple[float, int, Path]] = []
        for full in self.root.glob(f"facts-*/??/*{SUFFIX}"):
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
        for temp in self.root.glob("facts-*/??/.tmp-*"):
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
