"""The workspace as the host sees it: baselines, blob ids and blob bytes, read through git plumbing.

The host is the sole issuer of baselines (DESIGN §3). It only ever *reads* the work tree: git runs
with `GIT_OPTIONAL_LOCKS=0` so `git status` never rewrites the index, and nothing here opens a
workspace file for writing.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from asp_protocol.canonical import blob_id, digest

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")
_BYTE_CACHE_LIMIT = 64 * 1024 * 1024
#: Uploaded candidate blobs kept in memory; past this the oldest uploads are forgotten.
UPLOAD_BYTES_LIMIT = 256 * 1024 * 1024


def git_blob_sha1(data: bytes) -> str:
    """Git's object id of a blob with these bytes (to compare the work tree with HEAD cheaply)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class WorkTreeState:
    """One `git status` reading: the HEAD tree and every path whose work-tree bytes differ from it."""

    tree: str | None  # git tree id of HEAD; None outside git
    rev: str
    head_sha1: dict[str, str]  # path -> HEAD git sha1, for differing paths present in HEAD
    differing: dict[str, str | None]  # path -> work-tree blob id, None when deleted

    @property
    def dirty(self) -> str | None:
        if not self.differing:
            return None
        return digest(sorted([path, blob] for path, blob in self.differing.items()))

    def baseline(self) -> dict[str, str]:
        result = {"rev": self.rev}
        if self.dirty is not None:
            result["dirty"] = self.dirty
        return result


@dataclass
class _Caches:
    commit_tree: dict[str, str] = field(default_factory=dict)
    tree_entries: OrderedDict[str, dict[str, tuple[str, str]]] = field(default_factory=OrderedDict)
    sha1_to_blob: dict[str, str] = field(default_factory=dict)
    blob_to_sha1: dict[str, str] = field(default_factory=dict)
    bytes_by_sha1: OrderedDict[str, bytes] = field(default_factory=OrderedDict)
    byte_total: int = 0


class Workspace:
    """Read-only access to one repository: git work tree when there is one, plain directory otherwise."""

    def __init__(self, root: Path) -> None:
        root = root.resolve()
        self._env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
        self._env["GIT_OPTIONAL_LOCKS"] = "0"
        self._env["LC_ALL"] = "C"
        top = self._try_git(root, "rev-parse", "--show-toplevel")
        self.is_git = top is not None
        self.root = Path(top.decode().strip()) if top is not None else root
        self._real_root = self.root.resolve()
        self._caches = _Caches()
        self._lock = threading.Lock()
        self.uploads: OrderedDict[str, bytes] = OrderedDict()
        self._upload_bytes = 0

    # -- git plumbing ----------------------------------------------------------------------------

    def _try_git(self, cwd: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
        try:
            proc = subprocess.run(
                ["git", "-c", "core.quotepath=off", *args],
                cwd=cwd,
                env=self._env,
                input=stdin,
                capture_output=True,
                check=False,
            )
        except OSError:
            return None
        return proc.stdout if proc.returncode == 0 else None

    def _git(self, *args: str, stdin: bytes | None = None) -> bytes:
        out = self._try_git(self.root, *args, stdin=stdin)
        if out is None:
            raise RuntimeError(f"git {args[0]} failed in {self.root}")
        return out

    def _tree_of(self, commit: str | None) -> str:
        if commit is None:
            return EMPTY_TREE
        tree = self._caches.commit_tree.get(commit)
        if tree is None:
            tree = self._git("rev-parse", f"{commit}^{{tree}}").decode().strip()
            self._caches.commit_tree[commit] = tree
        return tree

    def tree_entries(self, tree: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, git sha1) of every blob in *tree* (cached; trees are immutable)."""
        with self._lock:
            cached = self._caches.tree_entries.get(tree)
        if cached is not None:
            return cached
        entries: dict[str, tuple[str, str]] = {}
        if tree != EMPTY_TREE:
            for record in self._git("ls-tree", "-r", "-z", "--full-tree", tree).split(b"\0"):
                if not record:
                    continue
                meta, _, path = record.partition(b"\t")
                mode, kind, sha1 = meta.decode().split(" ")
                if kind == "blob":
                    entries[path.decode("utf-8", "surrogateescape")] = (mode, sha1)
        with self._lock:
            self._caches.tree_entries[tree] = entries
            while len(self._caches.tree_entries) > 4:
                self._caches.tree_entries.popitem(last=False)
        return entries

    def git_blobs(self, sha1s: list[str]) -> dict[str, bytes]:
        """Bytes of git blobs by sha1, through one `git cat-file --batch`; records their blob ids."""
        result: dict[str, bytes] = {}
        missing = []
        with self._lock:
            for sha1 in sha1s:
                data = self._caches.bytes_by_sha1.get(sha1)
                if data is None:
                    missing.append(sha1)
                else:
                    result[sha1] = data
        if missing:
            out = self._git("cat-file", "--batch", stdin=("\n".join(missing) + "\n").encode())
            offset = 0
            for sha1 in missing:
                end = out.index(b"\n", offset)
                header = out[offset:end].split(b" ")
                offset = end + 1
                if len(header) < 3 or header[1] != b"blob":
                    continue
                size = int(header[2])
                data = out[offset : offset + size]
                offset += size + 1
                result[sha1] = data
                self._remember(sha1, data)
        return result

    def _remember(self, sha1: str, data: bytes) -> None:
        identity = blob_id(data)
        with self._lock:
            caches = self._caches
            caches.sha1_to_blob[sha1] = identity
            caches.blob_to_sha1[identity] = sha1
            if sha1 not in caches.bytes_by_sha1 and len(data) < _BYTE_CACHE_LIMIT // 8:
                caches.bytes_by_sha1[sha1] = data
                caches.byte_total += len(data)
                while caches.byte_total > _BYTE_CACHE_LIMIT and caches.bytes_by_sha1:
                    _, old = caches.bytes_by_sha1.popitem(last=False)
                    caches.byte_total -= len(old)

    def blob_ids_of(self, sha1s: list[str]) -> dict[str, str]:
        """sha1 -> blob id, reading only the blobs not seen before."""
        unknown = [s for s in sha1s if s not in self._caches.sha1_to_blob]
        if unknown:
            self.git_blobs(unknown)
        return {s: self._caches.sha1_to_blob[s] for s in sha1s if s in self._caches.sha1_to_blob}

    # -- snapshots ------------------------------------------------------------------------------

    def read_work_file(self, path: str) -> bytes | None:
        """Bytes of a work-tree file (a symlink's target text), None when absent or unreadable,
        or when a directory on the way is a symlink leading out of the workspace."""
        full = self.root / path
        try:
            if not full.parent.resolve().is_relative_to(self._real_root):
                return None
            if full.is_symlink():
                return os.readlink(full).encode("utf-8", "surrogateescape")
            if not full.is_file():
                return None
            return full.read_bytes()
        except OSError:
            return None

    def state(self) -> WorkTreeState:
        """The current work tree against HEAD: one `git status` (plus rev-parse when HEAD moved)."""
        if not self.is_git:
            return self._plain_state()
        out = self._git(
            "status", "--porcelain=v2", "-z", "--branch", "--no-renames", "--untracked-files=all"
        )
        commit: str | None = None
        head_sha1: dict[str, str] = {}
        candidates: dict[str, str | None] = {}  # path -> HEAD sha1 (None: not in HEAD)
        for record in out.split(b"\0"):
            if not record:
                continue
            text = record.decode("utf-8", "surrogateescape")
            if text.startswith("# branch.oid "):
                oid = text[len("# branch.oid ") :]
                commit = None if oid == "(initial)" else oid
            elif text.startswith("1 "):
                fields = text.split(" ", 8)
                mode_head, sha_head, path = fields[3], fields[6], fields[8]
                candidates[path] = None if mode_head == "000000" else sha_head
            elif text.startswith("u "):
                # u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>: stage 2 is HEAD
                fields = text.split(" ", 10)
                candidates[fields[10]] = None if fields[4] == "000000" else fields[8]
            elif text.startswith("? "):
                candidates[text[2:]] = None
        differing: dict[str, str | None] = {}
        for path, head in candidates.items():
            data = self.read_work_file(path)
            if data is None:
                if head is not None:
                    differing[path] = None
                    head_sha1[path] = head
                continue
            if head is not None and git_blob_sha1(data) == head:
                continue
            differing[path] = blob_id(data)
            if head is not None:
                head_sha1[path] = head
        tree = self._tree_of(commit)
        return WorkTreeState(tree, f"git:tree:{tree}", head_sha1, differing)

    def _plain_state(self) -> WorkTreeState:
        entries = self.plain_files()
        identity = digest(sorted([path, blob] for path, blob in entries.items()))
        return WorkTreeState(None, f"tree:{identity}", {}, {})

    def plain_files(self) -> dict[str, str]:
        """path -> blob id of every file under a non-git root (skipping any `.git`)."""
        entries: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in filenames:
                full = Path(dirpath) / name
                rel = full.relative_to(self.root).as_posix()
                data = self.read_work_file(rel)
                if data is not None:
                    entries[rel] = blob_id(data)
        return entries

    def head_index(self, state: WorkTreeState) -> dict[str, str]:
        """path -> blob id of the committed snapshot (`{rev}`)."""
        if state.tree is None:
            return self.plain_files()
        entries = self.tree_entries(state.tree)
        ids = self.blob_ids_of([sha1 for _, sha1 in entries.values()])
        return {path: ids[sha1] for path, (_, sha1) in entries.items() if sha1 in ids}

    def snapshot_index(self, state: WorkTreeState, *, with_dirty: bool) -> dict[str, str]:
        """path -> blob id of the committed snapshot, overlaid with the work tree when *with_dirty*."""
        index = dict(self.head_index(state))
        if with_dirty:
            for path, blob in state.differing.items():
                if blob is None:
                    index.pop(path, None)
                else:
                    index[path] = blob
        return index

    def head_blob_id(self, state: WorkTreeState, path: str) -> str | None:
        """Blob id of *path* in HEAD, or None when HEAD lacks it."""
        if state.tree is None:
            data = self.read_work_file(path)
            return blob_id(data) if data is not None else None
        entry = self.tree_entries(state.tree).get(path)
        if entry is None:
            return None
        return self.blob_ids_of([entry[1]]).get(entry[1])

    # -- blob resolution ------------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        """Store uploaded bytes (in memory, never in the workspace) and return their blob id.

        At most UPLOAD_BYTES_LIMIT bytes are kept, oldest evicted first; a changeset naming an
        evicted blob is then `blob_unavailable` (never allow) until it is uploaded again."""
        identity = blob_id(data)
        with self._lock:
            old = self.uploads.pop(identity, None)
            self._upload_bytes -= len(old) if old is not None else 0
            self.uploads[identity] = data
            self._upload_bytes += len(data)
            while self._upload_bytes > UPLOAD_BYTES_LIMIT and len(self.uploads) > 1:
                _, evicted = self.uploads.popitem(last=False)
                self._upload_bytes -= len(evicted)
        return identity

    def resolve(self, identity: str, hint_paths: list[str], tree: str | None) -> bytes | None:
        """Bytes for *identity* from uploads, the baseline tree, or a hash-checked work-tree file."""
        data = self.uploads.get(identity)
        if data is not None:
            return data
        if tree is not None and self.is_git:
            entries = self.tree_entries(tree)
            sha1s = [entries[p][1] for p in hint_paths if p in entries]
            known = self._caches.blob_to_sha1.get(identity)
            if known is not None:
                sha1s.insert(0, known)
            for _sha1, data in self.git_blobs(sha1s).items():
                if blob_id(data) == identity:
                    return data
        for path in hint_paths:
            data = self.read_work_file(path)
            if data is not None and blob_id(data) == identity:
                return data
        return None
