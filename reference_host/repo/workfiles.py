"""Reading work-tree files with bounded memory: streaming hashes and a size cap on loaded bytes.

A work tree can hold a multi-GB file. Hashing reads it in `CHUNK` pieces (git's sha1 and the
ASP blob id in one pass); loading bytes for a provider is refused above `MAX_BLOB_BYTES` and the
caller reports the path degraded as too large. Nothing here writes.

A digest is reused while the file's whole stat — device, inode, size, mtime and ctime to the
nanosecond — is what it was when the digest was taken (the rule git's index uses), and only if
the digest was not *racy*: a file whose mtime or ctime was not at least `RACY_NS` older than the
moment its reading began could be rewritten again within the same timestamp tick, same size,
with nothing in its stat to show it, so such a digest is never kept and the file is read again
on the next request. The margin covers a kernel's coarse file clock (it lags the host's clock by
up to a scheduler tick, about 10 ms), FAT's 2-second mtimes, and a network file server's clock
running up to 2 s behind the host's (more skew than that is the one case it does not cover; a
server clock ahead only makes more digests racy). A file that changes while it is read (its stat
after the read differs from before) gets no digest rather than a wrong one.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from asp_protocol.changesets import PathError, validate_path

CHUNK = 1024 * 1024
#: Blobs above this size are never loaded into memory for providers (reported "too large").
MAX_BLOB_BYTES = 16 * 1024 * 1024
_HASH_CACHE_ENTRIES = 20_000
#: A digest taken less than this after the file's last change is not reused (see above).
RACY_NS = 2_000_000_000
#: Readings of a file that keeps changing while it is read before it is given no identity.
CHANGING_TRIES = 3
#: The largest file a status on the event loop reads itself; a bigger one is read in a thread.
LOOP_READ_BYTES = 256 * 1024

#: What a reused digest must still match: device, inode, size, mtime_ns, ctime_ns.
Signature = tuple[int, int, int, int, int]


def signature(info: os.stat_result) -> Signature:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@functools.lru_cache(maxsize=65536)
def uncarried_reason(path: str) -> str | None:
    """Why *path* cannot be named in a ChangeSet, or None when it can (remembered: a status asks
    again for the same paths every time)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "file name is not valid UTF-8; rename it to have it evaluated"
    try:
        validate_path(path)
    except PathError:
        return "file name is not a valid ChangeSet path (e.g. holds a backslash); rename it"
    return None


def shown(path: str) -> str:
    """A printable, JSON-safe form of any path (undecodable bytes as \\xNN escapes)."""
    raw = path.encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace")[:300]


@dataclass(frozen=True)
class FileHash:
    """One work-tree entry's identity: git's blob sha1, the ASP blob id, and its size."""

    sha1: str
    blob_id: str
    size: int


def blob_sha1(size: int) -> hashlib._Hash:
    """A git sha1 hasher primed with git's blob header for *size* bytes (a sha1 repository)."""
    return hashlib.sha1(b"blob %d\x00" % size, usedforsecurity=False)


def hash_stream(chunks: list[bytes] | None, size: int) -> tuple[hashlib._Hash, hashlib._Hash]:
    """Fresh (git sha1, sha256) hashers primed with git's blob header for *size* bytes."""
    sha1 = blob_sha1(size)
    sha256 = hashlib.sha256()
    for chunk in chunks or ():
        sha1.update(chunk)
        sha256.update(chunk)
    return sha1, sha256


#: Identities of work-tree files taken during one request (None: absent or unreadable).
Taken = dict[str, FileHash | None]


@dataclass(frozen=True)
class Settled:
    """What one reading found, kept to be checked again cheaply (`WorkFiles.settle`): every
    directory on the way, each regular file with the stat its reused digest was taken under,
    and the paths that were absent."""

    dirs: tuple[str, ...]  # full paths, the root's included
    files: tuple[tuple[str, str, Signature, FileHash], ...]  # path, full path, stat, identity
    absent: tuple[tuple[str, str], ...]  # path, full path
    size: int  # how many paths


class _Entry(NamedTuple):
    full: str
    info: os.stat_result
    link: bytes | None  # a symlink's target text; None for a regular file


class WorkFiles:
    """Read-only, symlink-safe access to files under one root."""

    def __init__(self, root: Path, max_blob_bytes: int = MAX_BLOB_BYTES) -> None:
        self.root = root
        self.real_root = root.resolve()
        self._prefix = os.path.join(str(root), "")
        self._real = str(self.real_root)
        self._real_prefix = os.path.join(self._real, "")
        self._as_real = self._prefix == self._real_prefix  # the root was named by its real path
        self.max_blob_bytes = max_blob_bytes
        self._hashes: OrderedDict[str, tuple[Signature, FileHash]] = OrderedDict()
        self._lock = threading.Lock()

    def _inside(self, path: str, seen: dict[str, bool] | None = None) -> str | None:
        """The full path, or None when a directory on the way leads out of the workspace.

        *seen* remembers, for one batch of paths read together, which directories were found
        inside (a status compares many files of few directories)."""
        inside = self._dir_inside(path.rpartition("/")[0], {} if seen is None else seen)
        return self._prefix + path if inside else None

    def _dir_inside(self, directory: str, seen: dict[str, bool]) -> bool:
        """Whether *directory* (relative, "" for the root) resolves inside the real root."""
        inside = seen.get(directory)
        if inside is None:
            inside = seen[directory] = self._check_dir(directory, seen)
        return inside

    def _check_dir(self, directory: str, seen: dict[str, bool]) -> bool:
        """One lstat per directory: a real directory under an inside parent is inside; a symlink
        (or a root not named by its real path) is inside when its resolved target is."""
        if directory and not self._dir_inside(directory.rpartition("/")[0], seen):
            return False
        full = self._prefix + directory
        try:
            mode = os.lstat(full).st_mode
        except (OSError, ValueError):
            return False
        if stat.S_ISDIR(mode) and (directory or self._as_real):
            return True
        if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
            real = os.path.realpath(full)
            return real == self._real or real.startswith(self._real_prefix)
        return False

    def _entry(self, path: str, seen: dict[str, bool] | None = None) -> _Entry | None:
        """A symlink or regular file inside the workspace, else None; raises what `os` raises."""
        full = self._inside(path, seen)
        if full is None:
            return None
        info = os.lstat(full)
        if stat.S_ISLNK(info.st_mode):
            return _Entry(full, info, os.readlink(full).encode("utf-8", "surrogateescape"))
        return _Entry(full, info, None) if stat.S_ISREG(info.st_mode) else None

    def read(self, path: str, limit: int | None = None) -> bytes | None:
        """Bytes of a work-tree file (a symlink's target text); None when absent, unreadable,
        outside the workspace, or larger than *limit* (default: the blob size cap)."""
        cap = self.max_blob_bytes if limit is None else limit
        try:
            entry = self._entry(path)
            if entry is None or entry.link is not None:
                return None if entry is None else entry.link  # a symlink: its target text
            if entry.info.st_size > cap:
                return None
            with open(entry.full, "rb") as handle:
                data = handle.read(cap + 1)
        except (OSError, ValueError):
            return None
        return data if len(data) <= cap else None

    def read_each(self, paths: Iterable[str], limit: int) -> Iterator[tuple[str, bytes]]:
        """(path, bytes) of each of *paths* that is a regular file inside the workspace of at most
        *limit* bytes, the rest skipped: a symlink or a fifo is never followed or waited on."""
        seen: dict[str, bool] = {}
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        for path in paths:
            full = self._inside(path, seen)
            if full is None:
                continue
            try:
                fd = os.open(full, flags)
            except (OSError, ValueError):
                continue
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                    continue
                with open(fd, "rb", closefd=False) as handle:  # a byte past the size: it grew
                    data = handle.read(info.st_size + 1)
            except OSError:
                continue
            finally:
                os.close(fd)
            if len(data) <= limit:
                yield path, data

    def walk(self) -> tuple[dict[str, str], dict[str, str]]:
        """path -> blob id of every file under the root but any `.git` (a plain directory's
        snapshot), and shown path -> reason of every name a ChangeSet cannot carry."""
        entries: dict[str, str] = {}
        uncarried: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in filenames:
                rel = (Path(dirpath) / name).relative_to(self.root).as_posix()
                why = uncarried_reason(rel)
                if why is not None:
                    uncarried[shown(rel)] = why
                    continue
                found = self.hash(rel, with_sha1=False)
                if found is not None:
                    entries[rel] = found.blob_id
        return entries, uncarried

    def hash_all(
        self,
        wanted: dict[str, bool],
        *,
        on_loop: bool = False,
        taken: Taken | None = None,
    ) -> Taken | None:
        """`hash` of many paths (path -> with_sha1), each parent directory checked once.

        A status asks this for every changed path on every request, and nearly all of them are
        regular files whose digest is reused: that case is one lstat and a comparison here;
        anything else (no digest yet, a symlink, a racy digest, an error) goes through `hash`.
        With `on_loop` (the event loop may read a small file, never one of any size) a regular
        file over `LOOP_READ_BYTES` to read makes the answer None. *taken*: identities this
        request already took (a status's guess while git ran), used as they are; the ones
        taken here are added to it."""
        seen: dict[str, bool] = {}
        found: dict[str, FileHash | None] = {}
        prefix, cache, lstat = self._prefix, self._hashes, os.lstat
        for path, with_sha1 in wanted.items():
            if taken is not None and path in taken:
                earlier = taken[path]
                if earlier is None or earlier.sha1 or not with_sha1:
                    found[path] = earlier
                    continue
            directory = path.rpartition("/")[0]
            inside = seen.get(directory)
            if inside is None:
                inside = self._dir_inside(directory, seen)
            if not inside:
                found[path] = None
                continue
            try:
                info = lstat(prefix + path)
            except (OSError, ValueError):
                found[path] = None
                continue
            cached = cache.get(path)
            if cached is not None:
                known, digest = cached
                if (
                    known == signature(info)
                    and stat.S_ISREG(info.st_mode)
                    and (digest.sha1 or not with_sha1)
                ):
                    found[path] = digest
                    continue
            if on_loop and stat.S_ISREG(info.st_mode) and info.st_size > LOOP_READ_BYTES:
                return None
            found[path] = self.hash(path, with_sha1=with_sha1, seen=seen)
        if taken is not None:
            taken.update(found)
        return found

    def settle(self, found: Taken) -> Settled | None:
        """*found* (what `hash_all` gave one reading) as `Settled`, or None when one of its
        identities is not a digest kept under the reuse rule (racy, a symlink's, forgotten) or
        the root is not named by its real path: `recheck` would not be what `hash_all` is."""
        if not self._as_real:
            return None
        dirs: dict[str, None] = {"": None}
        files, absent = [], []
        for path, identity in found.items():
            directory = path.rpartition("/")[0]
            while directory and directory not in dirs:
                dirs[directory] = None
                directory = directory.rpartition("/")[0]
            full = self._prefix + path
            if identity is None:
                try:
                    os.lstat(full)
                except (OSError, ValueError):
                    absent.append((path, full))
                    continue
                return None  # there but given no identity (unreadable, not a file): ask again
            kept = self._hashes.get(path)
            if kept is None or kept[1] is not identity:
                return None
            files.append((path, full, kept[0], identity))
        full_dirs = tuple(self._prefix + directory for directory in dirs)
        return Settled(full_dirs, tuple(files), tuple(absent), len(found))

    def recheck(self, settled: Settled | None) -> Taken:
        """The identities `hash_all` would give now for the paths of *settled* that are as they
        were — a regular file with the very stat its digest was kept under, or still absent —
        all under directories that are still directories (else none: `hash_all` judges all)."""
        if settled is None:
            return {}
        lstat, is_dir, is_file = os.lstat, stat.S_ISDIR, stat.S_ISREG
        try:
            if not all(is_dir(lstat(full).st_mode) for full in settled.dirs):
                return {}
        except (OSError, ValueError):
            return {}
        taken: Taken = {}
        for path, full, known, identity in settled.files:
            try:
                info = lstat(full)
            except (OSError, ValueError):
                continue  # left to hash_all
            now = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            if now == known and is_file(info.st_mode):
                taken[path] = identity
        for path, full in settled.absent:
            try:
                lstat(full)
            except (OSError, ValueError):
                taken[path] = None
        return taken

    def hash(
        self, path: str, *, with_sha1: bool = True, seen: dict[str, bool] | None = None
    ) -> FileHash | None:
        """Streaming identity of a work-tree file; None when absent, unreadable, outside, or
        changing under each of `CHANGING_TRIES` readings.

        `with_sha1=False` (a path HEAD lacks, so nothing to compare with) skips git's sha1 and
        leaves `FileHash.sha1` empty: half the hashing on a huge untracked file."""
        for _attempt in range(CHANGING_TRIES):
            try:
                entry = self._entry(path, seen)
                if entry is None:
                    return None
                full, info, target = entry
                if target is not None:
                    sha1, sha256 = hash_stream([target], len(target))
                    blob = "blob:sha256:" + sha256.hexdigest()
                    return FileHash(sha1.hexdigest(), blob, len(target))
                before = signature(info)
                cached = self._hashes.get(path)
                if cached is not None and cached[0] == before and (cached[1].sha1 or not with_sha1):
                    return cached[1]
                began = time.time_ns()
                result = self._hash_regular(full, before, with_sha1)
            except (OSError, ValueError):
                return None
            if result is not None:
                break
        else:
            return None  # rewritten under every reading: no identity rather than a wrong one
        if max(before[3], before[4]) < began - RACY_NS:
            with self._lock:
                self._hashes.pop(path, None)
                self._hashes[path] = (before, result)
                while len(self._hashes) > _HASH_CACHE_ENTRIES:
                    self._hashes.popitem(last=False)
        return result

    @staticmethod
    def _hash_regular(full: str, before: Signature, with_sha1: bool) -> FileHash | None:
        size = before[2]
        sha1, sha256 = hash_stream(None, size)
        read = 0
        with open(full, "rb") as handle:
            while read <= size and (chunk := handle.read(CHUNK)):
                read += len(chunk)  # past `size`: it grew, so stop (and read it again)
                if with_sha1:
                    sha1.update(chunk)
                sha256.update(chunk)
            after = signature(os.fstat(handle.fileno()))
        if read != size or after != before:
            return None  # changed while it was read: read again (see `hash`)
        sha1_hex = sha1.hexdigest() if with_sha1 else ""
        return FileHash(sha1_hex, "blob:sha256:" + sha256.hexdigest(), size)
