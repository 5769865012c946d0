"""Committed content through git plumbing, with bounded memory: trees, blob ids and blob bytes.

`git cat-file --batch` output is read as a stream, one object at a time: a blob over the cap is
hashed chunk by chunk and never held, so a multi-GB committed file costs no more memory than a
small one. Bytes of small blobs are cached (64 MiB in all); identities (sha1 <-> blob id, size)
are remembered for every blob seen.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import IO

from reference_host.repo.git import GitRunner, GitUnusable
from reference_host.repo.workcopies import WorkCopies
from reference_host.repo.workfiles import CHUNK, WorkFiles, hash_stream

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# A snapshot reads every blob once for its id and a provider's index build reads it again right
# after: at 16 MiB the second read went back to git and a Django restart took 14 s instead of 4-5 s,
# for 8 MiB of resident memory saved.
_BYTE_CACHE_LIMIT = 64 * 1024 * 1024
_SPLIT_AT = 2_000  # blobs: below this one process reads them in well under a second


def _read_exact(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise GitUnusable("git cat-file ended early")
    return data


class BlobReader:
    """Trees and blobs of one repository, cached (trees and blobs are immutable)."""

    def __init__(
        self, runner: GitRunner, max_blob_bytes: int, files: WorkFiles | None = None
    ) -> None:
        self.runner = runner
        self.max_blob_bytes = max_blob_bytes
        # blobs found as work-tree copies: read there again (and checked again), not held here
        self.copies = WorkCopies(files, max_blob_bytes) if files is not None else None
        self._lock = threading.Lock()
        self._commit_tree: dict[str, str] = {}
        self._trees: OrderedDict[str, dict[str, tuple[str, str]]] = OrderedDict()
        self._links: dict[str, frozenset[str]] = {}
        self._gitlinks: dict[str, frozenset[str]] = {}  # tree -> its submodules' paths
        self._sha1_to_blob: dict[str, str] = {}
        self._blob_to_sha1: dict[str, str] = {}
        self._sizes: dict[str, int] = {}  # sha1 -> size
        self._bytes: OrderedDict[str, bytes] = OrderedDict()
        self._byte_total = 0

    def _git(self, *args: str) -> bytes:
        out = self.runner.run(*args)
        if not out.ok:
            raise GitUnusable(out.reason())
        return out.stdout

    def knows_commit(self, commit: str | None) -> bool:
        """Whether `tree_of(commit)` is answered without running git."""
        return commit is None or commit in self._commit_tree

    def tree_of(self, commit: str) -> str:
        tree = self._commit_tree.get(commit)
        if tree is None:
            tree = self._git("rev-parse", f"{commit}^{{tree}}").decode().strip()
            self._commit_tree[commit] = tree
        return tree

    def tree_entries(self, tree: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, git sha1) of every blob in *tree* (submodules and trees skipped)."""
        with self._lock:
            cached = self._trees.get(tree)
        if cached is not None:
            return cached
        entries: dict[str, tuple[str, str]] = {}
        gitlinks: list[str] = []
        if tree != EMPTY_TREE:
            for record in self._git("ls-tree", "-r", "-z", "--full-tree", tree).split(b"\0"):
                if not record:
                    continue
                meta, _, path = record.partition(b"\t")
                mode, kind, sha1 = meta.decode().split(" ")
                if kind == "blob":
                    entries[path.decode("utf-8", "surrogateescape")] = (mode, sha1)
                elif kind == "commit":
                    gitlinks.append(path.decode("utf-8", "surrogateescape"))
        with self._lock:
            self._trees[tree] = entries
            self._gitlinks[tree] = frozenset(gitlinks)
            while len(self._trees) > 4:
                self._gitlinks.pop(self._trees.popitem(last=False)[0], None)
        return entries

    def gitlinks_of(self, tree: str) -> frozenset[str]:
        """Paths *tree* records as submodules (mode 160000: a commit of another repository)."""
        with self._lock:
            found = self._gitlinks.get(tree)
            if found is None:
                self._trees.pop(tree, None)  # listed again below, the submodules with it
        if found is None:
            self.tree_entries(tree)
            with self._lock:
                found = self._gitlinks.get(tree, frozenset())
        return found

    def links_of(self, tree: str) -> frozenset[str]:
        """Paths git records in *tree* as symbolic links (mode 120000): their blob is the target
        path, not content, which a provider can only tell by the listing's `kind`."""
        found = self._links.get(tree)
        if found is None:
            entries = self.tree_entries(tree)
            found = frozenset(p for p, (mode, _) in entries.items() if mode == "120000")
            with self._lock:
                self._links[tree] = found
                while len(self._links) > 4:
                    self._links.pop(next(iter(self._links)))
        return found

    def knows(self, sha1: str) -> bool:
        """Whether the blob id of *sha1* is known (`ids_of` reads nothing for it)."""
        return sha1 in self._sha1_to_blob

    def identify_copies(self, entries: Iterable[tuple[str, str, str]]) -> None:
        """Identify the blobs of tree *entries* (path, mode, sha1) not known yet whose work-tree
        copy holds exactly their bytes, without keeping the bytes (workcopies.py)."""
        if self.copies is not None:
            for sha1, data in self.copies.find(entries, self.knows):
                self._remember(sha1, data, False)

    def sha1_for(self, identity: str) -> str | None:
        return self._blob_to_sha1.get(identity)

    def size_of_identity(self, identity: str) -> int | None:
        sha1 = self._blob_to_sha1.get(identity)
        return self._sizes.get(sha1) if sha1 is not None else None

    def read(self, sha1s: list[str]) -> dict[str, bytes]:
        """Bytes of blobs by sha1; blobs over the cap are identified but their bytes not returned."""
        result: dict[str, bytes] = {}
        missing = []
        with self._lock:
            for sha1 in sha1s:
                data = self._bytes.get(sha1)
                if data is not None:
                    result[sha1] = data
                elif self._sizes.get(sha1, 0) <= self.max_blob_bytes:
                    missing.append(sha1)
        if missing and self.copies is not None:
            found = self.copies.read(missing)
            result.update(found)
            missing = [sha1 for sha1 in missing if sha1 not in found]
        if missing:
            result.update(self._stream(list(dict.fromkeys(missing))))
        return result

    def ids_of(self, sha1s: list[str]) -> dict[str, str]:
        """sha1 -> blob id, reading only the blobs not identified before."""
        unknown = [s for s in dict.fromkeys(sha1s) if s not in self._sha1_to_blob]
        if unknown:
            self._stream(unknown)
        return {s: self._sha1_to_blob[s] for s in sha1s if s in self._sha1_to_blob}

    def _stream(self, sha1s: list[str], keep: bool = True) -> dict[str, bytes]:
        """Small blobs of *sha1s* returned (and cached), every one identified.

        A long list is read by two `cat-file` processes at once: a first snapshot of a large tree
        is mostly git inflating objects (Home Assistant's 43,000 blobs: ~2 s of git's CPU beside
        ~1.5 s of ours), and a second process puts the other core to work."""
        if len(sha1s) < _SPLIT_AT or (os.cpu_count() or 1) < 2:
            return self._stream_one(sha1s, keep)
        half = len(sha1s) // 2
        parts: list[dict[str, bytes]] = [{}, {}]
        failed: list[BaseException] = []

        def second() -> None:
            try:
                parts[1] = self._stream_one(sha1s[half:], keep)
            except BaseException as exc:  # raised again in the caller's thread
                failed.append(exc)

        helper = threading.Thread(target=second, daemon=True)
        helper.start()
        try:
            parts[0] = self._stream_one(sha1s[:half], keep)
        finally:
            helper.join()
        if failed:
            raise failed[0]
        return {**parts[0], **parts[1]}

    def _stream_one(self, sha1s: list[str], keep: bool) -> dict[str, bytes]:
        """One `cat-file --batch` read object by object."""
        result: dict[str, bytes] = {}
        proc = self.runner.popen("cat-file", "--batch", "--buffer")
        assert proc.stdin is not None and proc.stdout is not None
        request = ("\n".join(sha1s) + "\n").encode()
        stdin = proc.stdin

        def feed() -> None:  # a writer thread: cat-file's output pipe fills while we still write
            try:
                stdin.write(request)
                stdin.close()
            except OSError:
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for sha1 in sha1s:
                header = proc.stdout.readline().split(b" ")
                if len(header) < 3:
                    continue  # "<sha1> missing"
                size = int(header[2])
                if header[1] != b"blob":
                    _drain(proc.stdout, size + 1)
                    continue
                if size > self.max_blob_bytes:
                    self._identify_large(proc.stdout, sha1, size)
                    continue
                data = _read_exact(proc.stdout, size)
                proc.stdout.read(1)
                self._remember(sha1, data, keep)
                result[sha1] = data
        finally:
            proc.stdout.close()
            proc.wait()
            writer.join()
        return result

    def _identify_large(self, stream: IO[bytes], sha1: str, size: int) -> None:
        _, sha256 = hash_stream(None, size)
        left = size
        while left:
            chunk = _read_exact(stream, min(CHUNK, left))
            sha256.update(chunk)
            left -= len(chunk)
        stream.read(1)
        identity = "blob:sha256:" + sha256.hexdigest()
        with self._lock:
            self._sha1_to_blob[sha1] = identity
            self._blob_to_sha1[identity] = sha1
            self._sizes[sha1] = size

    def _remember(self, sha1: str, data: bytes, keep: bool) -> None:
        identity = "blob:sha256:" + hashlib.sha256(data).hexdigest()  # git gave the sha1
        with self._lock:
            self._sha1_to_blob[sha1] = identity
            self._blob_to_sha1[identity] = sha1
            self._sizes[sha1] = len(data)
            if keep and sha1 not in self._bytes and len(data) < _BYTE_CACHE_LIMIT // 8:
                self._bytes[sha1] = data
                self._byte_total += len(data)
                while self._byte_total > _BYTE_CACHE_LIMIT and self._bytes:
                    _, old = self._bytes.popitem(last=False)
                    self._byte_total -= len(old)


def _drain(stream: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = stream.read(min(CHUNK, size))
        if not chunk:
            return
        size -= len(chunk)
