"""Committed blobs identified from the work tree's copies of them, so git need not inflate them.

A snapshot of HEAD names every file by its ASP blob id (sha256 of the bytes), and git's tree only
gives sha1s: streaming every blob through `git cat-file` makes git inflate each object, which is
most of a first snapshot of a large tree (Salt, 5,297 blobs and 58 MB: about 0.5 s on two cores).
Nearly every work-tree file holds exactly its committed bytes, and bytes whose git blob sha1 is the
tree's sha1 *are* that blob — whatever git's filters, the index or the file's stat say. So those
bytes are taken as the blob's (and kept for the provider reads that follow a snapshot). Anything
else is left to `cat-file`, unread here: a modified file, a symlink or anything but a regular file,
a file over the cap, bytes a filter changes on checkout, a repository with sha256 object names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from reference_host.repo.gitblobs import BlobReader
from reference_host.repo.workfiles import WorkFiles

REGULAR_MODES = frozenset({"100644", "100755"})


def git_sha1(data: bytes) -> str:
    """The object name git gives *data* as a blob (in a sha1 repository)."""
    hasher = hashlib.sha1(b"blob %d\x00" % len(data), usedforsecurity=False)
    hasher.update(data)
    return hasher.hexdigest()


def identify_copies(
    blobs: BlobReader, files: WorkFiles, entries: Iterable[tuple[str, str, str]]
) -> int:
    """Identify in *blobs* every committed blob of *entries* (path, mode, sha1) not known yet
    whose work-tree copy holds exactly its bytes; returns how many were."""
    wanted = {
        path: sha1
        for path, mode, sha1 in entries
        if mode in REGULAR_MODES and not blobs.knows(sha1)
    }
    found = 0
    for path, data in files.read_each(wanted, blobs.max_blob_bytes):
        sha1 = wanted[path]
        if git_sha1(data) == sha1:
            blobs.adopt(sha1, data)
            found += 1
    return found
