"""git blob sha1 -> protocol blob id (sha256) and size, kept across host restarts.

Why it exists: blob ids are sha256 of the content and git names blobs by sha1, so a fresh host
reads and hashes every committed blob before its first snapshot. On Home Assistant (45,750 files)
that was 4.7 s of git inflating objects, before a first evaluation or inspect could start. A git
blob never changes, so neither does its sha256: the pair is a fact about the content and can be
remembered. A restart then needs a tree listing, not a read of every blob.

Where: one file per work tree under the host's cache root (`trust.cache_dirs`, the user's cache
directory; `ASP_HOST_CACHE_DIR=off` turns it off), never inside the workspace. At most
`MAX_ENTRIES` records per file and `MAX_FILES` files (the least recently written go first); any
file may be deleted at any time.

What a damaged or planted file can do: a file that is truncated, fails its checksum, is not owned
by this user or is writable by others is ignored whole. A wrong record that passes those checks
(only someone who can write this user's cache could make one, and they could rewrite the
providers' caches too) cannot put wrong bytes in front of a provider: the host hashes every blob
it serves against the id asked for (`Workspace.resolve`), so a wrong id ends as a missing blob,
never an allow. What it could do is make the host name a wrong id for a blob nobody read.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
from collections.abc import Iterable
from pathlib import Path

from reference_host.trust.cache_dirs import cache_root

_LOG = logging.getLogger(__name__)
MAGIC = b"asp-blob-ids/1\n\0"  # 16 bytes: format and version
_RECORD = struct.Struct(">20s32sQ")  # git sha1, sha256, size
_COUNT = struct.Struct(">I")
MAX_ENTRIES = 250_000  # 15 MB on disk; Home Assistant's HEAD is 45,750
MAX_FILES = 32
ID_PREFIX = "blob:sha256:"
Entry = tuple[str, str, int]  # (git sha1 hex, blob id, size)


class BlobIdStore:
    """One work tree's file of identities; every failure is a miss, never an error."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[Entry]:
        """The file's records, oldest first; [] when it is missing, damaged or not trusted."""
        try:
            with open(self.path, "rb") as handle:
                info = os.fstat(handle.fileno())
                if info.st_uid != os.getuid() or info.st_mode & 0o022:
                    _LOG.warning("blob id cache %s ignored: not private to this user", self.path)
                    return []
                data = handle.read((MAX_ENTRIES + 1) * _RECORD.size)
        except OSError:
            return []
        head = len(MAGIC) + _COUNT.size
        if len(data) < head + 32 or not data.startswith(MAGIC):
            return []
        (count,) = _COUNT.unpack_from(data, len(MAGIC))
        end = head + count * _RECORD.size
        if count > MAX_ENTRIES or len(data) != end + 32:
            return []
        if hashlib.sha256(data[:end]).digest() != data[end:]:
            _LOG.warning("blob id cache %s ignored: checksum mismatch", self.path)
            return []
        return [
            (sha1.hex(), ID_PREFIX + sha256.hex(), size)
            for sha1, sha256, size in _RECORD.iter_unpack(data[head:end])
        ]

    def save(self, entries: Iterable[Entry]) -> None:
        """Write *entries* (oldest first; the newest `MAX_ENTRIES` kept) atomically, private."""
        records = []
        for sha1, identity, size in entries:
            if len(sha1) == 40 and identity.startswith(ID_PREFIX) and len(identity) == 76:
                records.append(
                    _RECORD.pack(bytes.fromhex(sha1), bytes.fromhex(identity[12:]), size)
                )
        records = records[-MAX_ENTRIES:]
        body = MAGIC + _COUNT.pack(len(records)) + b"".join(records)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(body + hashlib.sha256(body).digest())
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
            _prune(self.path.parent)
        except OSError as exc:
            _LOG.warning("blob id cache %s not written: %s", self.path, exc)


def _prune(directory: Path) -> None:
    """Keep the `MAX_FILES` most recently written files (another host may prune at once)."""
    dated = []
    for path in directory.glob("*.ids"):
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, old in sorted(dated, reverse=True)[MAX_FILES:]:
        old.unlink(missing_ok=True)


def store_for(work_tree: Path) -> BlobIdStore | None:
    """The store of *work_tree*, or None when caching is off or the cache root lies inside it."""
    root = cache_root()
    if root is None:
        return None
    directory = (root / "host-blob-ids").resolve()
    inside = work_tree.resolve()
    if directory == inside or inside in directory.parents:
        return None
    name = hashlib.sha256(os.fsencode(inside)).hexdigest()[:32]
    return BlobIdStore(directory / f"{name}.ids")
