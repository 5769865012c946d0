"""Committed blobs read from the work tree's copies of them, so git need not inflate them.

A snapshot of HEAD names every file by its ASP blob id (sha256 of the bytes), and git's tree only
gives sha1s: streaming every blob through `git cat-file` makes git inflate each object, which is
most of a first snapshot of a large tree (Salt, 5,297 blobs and 58 MB: about 0.5 s on two cores).
Nearly every work-tree file holds exactly its committed bytes, and bytes whose git blob sha1 is the
tree's sha1 *are* that blob, whatever git's filters, the index or the file's stat say. So those
bytes are taken as the blob's, and the copy's path is remembered: a provider's read of the blob
right after the snapshot reads that copy again, and checks its sha1 again, instead of the host
holding every blob's bytes in memory between the two. Anything else is left to `cat-file`: a
modified file, a symlink or anything but a regular file, a file over the cap, bytes a filter
changes on checkout, a repository with sha256 object names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator

from reference_host.repo.workfiles import WorkFiles, blob_sha1

REGULAR_MODES = frozenset({"100644", "100755"})


def git_sha1(data: bytes) -> str:
    """The object name git gives *data* as a blob (in a sha1 repository)."""
    hasher = blob_sha1(len(data))
    hasher.update(data)
    return hasher.hexdigest()


class WorkCopies:
    """Where the bytes of committed blobs were last found in the work tree."""

    def __init__(self, files: WorkFiles, max_bytes: int) -> None:
        self.files = files
        self.max_bytes = max_bytes
        self._paths: dict[str, str] = {}  # sha1 -> the path its copy was found at
        self._lock = threading.Lock()

    def find(
        self, entries: Iterable[tuple[str, str, str]], known: Callable[[str], bool]
    ) -> Iterator[tuple[str, bytes]]:
        """(sha1, bytes) of every tree entry (path, mode, sha1) not *known* yet whose work-tree
        copy holds exactly that blob's bytes; each such path is remembered."""
        wanted = {p: s for p, mode, s in entries if mode in REGULAR_MODES and not known(s)}
        for path, data in self.files.read_each(wanted, self.max_bytes):
            sha1 = wanted[path]
            if git_sha1(data) == sha1:
                with self._lock:
                    self._paths[sha1] = path
                yield sha1, data

    def read(self, sha1s: Iterable[str]) -> dict[str, bytes]:
        """Bytes of those of *sha1s* whose remembered copy still holds exactly them (a copy
        edited since is forgotten: its blob is git's to read)."""
        with self._lock:
            by_path = {self._paths[s]: s for s in sha1s if s in self._paths}
        found: dict[str, bytes] = {}
        for path, data in self.files.read_each(by_path, self.max_bytes):
            sha1 = by_path[path]
            if git_sha1(data) == sha1:
                found[sha1] = data
        with self._lock:
            for sha1 in set(by_path.values()) - set(found):
                self._paths.pop(sha1, None)
        return found
