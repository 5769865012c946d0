"""The workspace as the host sees it: baselines, blob ids and blob bytes, read through git plumbing.

The host is the sole issuer of baselines (docs/workspace-git.md). It only ever *reads* the work
tree, and every git call goes through `reference_host.repo.git.GitRunner`, which never lets the
repository start a program. Three modes, decided by asking git, never guessed:

- `git`: a usable work tree; baselines are `git:tree:<id>` (+ `dirty`).
- `plain`: no repository at or above the root (and no `.git` anywhere on the way); baselines are
  `tree:<digest>` and there is no "change against HEAD".
- `unusable`: a repository git will not or cannot read (dubious ownership, corrupt or bare, git
  missing from PATH, ...): `WorkTreeState.unusable` carries git's own reason, status reports it,
  no evaluation may allow, and the host never sets `safe.directory`.

Work-tree files are hashed streaming (`workfiles.py`), never loaded over the blob cap. A name a
ChangeSet cannot carry (not UTF-8, refused by `validate_path`) is left out and listed in
`WorkTreeState.uncarried`; paths `git status` is told to skip are compared too (`gitindex.py`).
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from asp_protocol.canonical import blob_id, digest, digest_bytes
from asp_protocol.framing import compact_json
from reference_host.repo import gitstatus, workfiles
from reference_host.repo.git import GitResult, GitRunner, GitUnusable, has_git_entry
from reference_host.repo.gitblobs import EMPTY_TREE, BlobReader
from reference_host.repo.gitindex import HiddenEntries
from reference_host.repo.gitstatus import (
    STATUS_ARGS,
    NeedsReading,
    PendingState,
    filtered_paths,
    parse_status,
)
from reference_host.repo.workfiles import MAX_BLOB_BYTES, Taken, WorkFiles, shown, uncarried_reason

UNUSABLE_REV = "unavailable:git"
#: Uploaded candidate blobs kept in memory; past this the oldest uploads are forgotten.
UPLOAD_BYTES_LIMIT = 256 * 1024 * 1024


@dataclass(frozen=True)
class WorkTreeState:
    """One `git status` reading: the HEAD tree and every path whose work-tree bytes differ from it."""

    tree: str | None  # git tree id of HEAD; None outside git
    rev: str
    head_sha1: dict[str, str]  # path -> HEAD git sha1, for differing paths present in HEAD
    differing: dict[str, str | None]  # path -> work-tree blob id, None when deleted
    unusable: str | None = None  # git's reason when there is a repository git cannot use
    uncarried: dict[str, str] = field(default_factory=dict)  # shown path -> reason
    too_large: dict[str, int] = field(default_factory=dict)  # differing path -> size over the cap
    vcs: bool = True  # False outside version control (plain directory)

    @cached_property
    def dirty(self) -> str | None:
        if not self.differing and not self.uncarried:
            return None
        return _dirty_digest(frozenset(self.differing.items()), frozenset(self.uncarried))

    def baseline(self) -> dict[str, str]:
        result = {"rev": self.rev}
        if self.dirty is not None:
            result["dirty"] = self.dirty
        return result


@functools.lru_cache(maxsize=8)
def _dirty_digest(differing: frozenset[tuple[str, str | None]], uncarried: frozenset[str]) -> str:
    """The `dirty` digest of a set of differences (remembered: a status polled while nothing
    changes asks for the same one every time; the key is the whole set, so any change misses).
    Its canonical JSON has strings and nulls only, no keys to sort: the encoder's compact bytes."""
    pairs: list[list[str | None]] = [[path, blob] for path, blob in differing]
    pairs.extend([f"uncarried:{path}", None] for path in uncarried)
    return digest_bytes(compact_json(sorted(pairs, key=lambda pair: str(pair[0]))))


@dataclass(frozen=True)
class _Reading:
    """The last `git status` answer read in full, what it named, its state and identities
    (and those as `Settled`, made by the first guess that checks them again)."""

    stdout: bytes
    tree: str
    candidates: dict[str, str | None]
    state: WorkTreeState
    hashes: Taken
    settled: list[workfiles.Settled | None] = field(default_factory=list)


class Workspace:
    """Read-only access to one repository: git work tree when usable, plain directory outside git."""

    def __init__(self, root: Path, *, max_blob_bytes: int = MAX_BLOB_BYTES) -> None:
        self.requested_root = root.resolve()
        self.max_blob_bytes = max_blob_bytes
        self.runner = GitRunner(self.requested_root)
        self.root = self.requested_root
        self.mode = "plain"
        self.unusable: str | None = None
        self._discover()
        self._last: _Reading | None = None
        self._parsed: gitstatus.Parsed = {}  # the last answer's records, read again when repeated
        self._lock = threading.Lock()
        self.uploads: OrderedDict[str, bytes] = OrderedDict()
        self._upload_bytes = 0

    # -- git -------------------------------------------------------------------------------------

    def _discover(self) -> None:
        """Decide the mode from git's own answer (see the module docstring)."""
        try:
            top = self.runner.run("rev-parse", "--show-toplevel")
        except GitUnusable as exc:
            top = None
            reason = exc.reason
        if top is not None and top.ok:
            path = Path(os.fsdecode(top.stdout.rstrip(b"\n")))
            # a work tree moved by the repository's own config (core.worktree) holds no .git
            if self.requested_root.is_relative_to(path.resolve()) and os.path.lexists(
                path / ".git"
            ):
                self.mode, self.unusable, self.root = "git", None, path
            else:
                self.mode, self.root = "unusable", self.requested_root
                self.unusable = (
                    f"the repository's work tree is {shown(str(path))} (core.worktree?), "
                    "not the directory holding .git"
                )
        else:
            if top is not None:
                reason = top.reason()
            no_repository = top is None or "not a git repository" in reason
            if no_repository and not has_git_entry(self.requested_root):
                self.mode, self.unusable = "plain", None
            else:
                self.mode, self.unusable = "unusable", reason
            self.root = self.requested_root
        self.runner.cwd = self.root
        self.files = WorkFiles(self.root, self.max_blob_bytes)
        self.blobs = BlobReader(self.runner, self.max_blob_bytes, self.files)
        self.hidden = HiddenEntries(self.runner, self.root, self.blobs)  # what git status skips

    @property
    def is_git(self) -> bool:
        return self.mode == "git"

    def git(self, *args: str, stdin: bytes | None = None) -> GitResult:
        """Run git in the workspace through the one safe runner (no repository program ever runs).

        For other host code (e.g. a workspace-changed check): returns git's result; raises
        `GitUnusable` when git cannot be started."""
        return self.runner.run(*args, stdin=stdin)

    def _tree_of(self, commit: str | None) -> str:
        return EMPTY_TREE if commit is None else self.blobs.tree_of(commit)

    def tree_entries(self, tree: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, git sha1) of every blob in *tree* (cached; trees are immutable)."""
        return self.blobs.tree_entries(tree)

    def git_blobs(self, sha1s: list[str]) -> dict[str, bytes]:
        """Bytes of git blobs by sha1 (those not over the blob cap); records their blob ids."""
        return self.blobs.read(sha1s)

    def blob_ids_of(self, sha1s: list[str]) -> dict[str, str]:
        """sha1 -> blob id, reading (streaming) only the blobs not seen before."""
        return self.blobs.ids_of(sha1s)

    # -- snapshots ------------------------------------------------------------------------------
    def read_work_file(self, path: str) -> bytes | None:
        """Bytes of a work-tree file (a symlink's target text), None when absent, unreadable,
        over the blob cap, or when a directory on the way is a symlink out of the workspace."""
        return self.files.read(path)

    def state(self) -> WorkTreeState:
        """The current work tree against HEAD: one `git status` (plus rev-parse when HEAD moved)."""
        pending = self.start_state()
        try:
            return pending.result()
        finally:
            pending.close()

    def start_state(self) -> PendingState[WorkTreeState]:
        """`state` in two halves: `git status` runs while the caller does work that does not
        need its answer; `result()` then reads it. Always `close()` it (kills git if unread)."""
        if self.mode == "unusable":
            self._discover()  # the user may have fixed it; never fixed *for* them
        if self.mode == "plain":
            return PendingState(self._plain_state())
        if self.mode == "unusable":
            return PendingState(self._unusable_state(self.unusable or "git cannot be used"))
        try:
            self.runner.refresh_drivers()
            running = self.runner.start(*STATUS_ARGS)
        except GitUnusable as exc:
            return PendingState(self._unusable_state(exc.reason))
        return PendingState(None, running, self._git_state, self._guess)

    def _guess(self) -> gitstatus.Guess[WorkTreeState] | None:
        """While git runs: the state if it answers as last time, its paths compared now (None:
        a large file to read, or a blanked filter, whose paths git does not name; gitstatus.py)."""
        last = self._last
        if last is None or self.runner.filtered_drivers or not self.hidden.fresh():
            return None
        if not last.settled:
            last.settled.append(self.files.settle(last.hashes))
        taken = self.files.recheck(last.settled[0])  # each path's stat checked now
        if len(taken) == len(last.hashes):  # every one as it was: the state is that reading's
            return gitstatus.Guess(last.stdout, last.state, taken)
        try:
            state = self._compare(last.tree, last.candidates, True, taken)[0]
        except NeedsReading:
            return None
        return gitstatus.Guess(last.stdout, last.state if state == last.state else state, taken)

    def _unusable_state(self, reason: str) -> WorkTreeState:
        return WorkTreeState(None, UNUSABLE_REV, {}, {}, unusable=reason)

    def _git_state(
        self, status: GitResult, on_loop: bool = False, taken: Taken | None = None
    ) -> WorkTreeState:
        try:
            return self._read_status(status, on_loop, taken)
        except GitUnusable as exc:
            return self._unusable_state(exc.reason)

    def _read_status(self, status: GitResult, on_loop: bool, taken: Taken | None) -> WorkTreeState:
        if not status.ok:
            raise GitUnusable(status.reason())
        commit, candidates = parse_status(status.stdout, self._parsed)
        if on_loop and (self.runner.filtered_drivers or not self.blobs.knows_commit(commit)):
            raise NeedsReading  # check-attr over HEAD, or rev-parse of a new commit
        tree = self._tree_of(commit)
        candidates.update(self.hidden.candidates(tree, candidates, on_loop))
        if self.runner.filtered_drivers:
            candidates.update(filtered_paths(self.runner, self.tree_entries(tree), candidates))
            return self._compare(tree, candidates, on_loop, dict(taken or {}))[0]
        state, hashes = self._compare(tree, candidates, on_loop, dict(taken or {}))
        self._last = _Reading(status.stdout, tree, candidates, state, hashes)
        return state

    def _compare(
        self, tree: str, candidates: dict[str, str | None], on_loop: bool, taken: Taken | None
    ) -> tuple[WorkTreeState, Taken]:
        """The state of *candidates* against *tree*, and each carried path's identity."""
        head_sha1: dict[str, str] = {}
        differing: dict[str, str | None] = {}
        uncarried: dict[str, str] = {}
        too_large: dict[str, int] = {}
        carried: dict[str, str | None] = {}
        for path, head in candidates.items():
            why = gitstatus.uncarried(path, head)
            if why is not None:
                uncarried[shown(path)] = why
            else:
                carried[path] = head
        wanted = {path: head is not None for path, head in carried.items()}
        hashes = self.files.hash_all(wanted, on_loop=on_loop, taken=taken)
        if hashes is None:
            raise NeedsReading
        for path, head in carried.items():
            found = hashes[path]
            if found is None:
                if head is not None:
                    differing[path] = None
                    head_sha1[path] = head
                continue
            if head is not None and found.sha1 == head:
                continue
            differing[path] = found.blob_id
            if found.size > self.max_blob_bytes:
                too_large[path] = found.size
            if head is not None:
                head_sha1[path] = head
        state = WorkTreeState(
            tree, f"git:tree:{tree}", head_sha1, differing, uncarried=uncarried, too_large=too_large
        )
        return state, hashes

    def _plain_state(self) -> WorkTreeState:
        entries, uncarried = self.files.walk()
        identity = digest(sorted([path, blob] for path, blob in entries.items()))
        return WorkTreeState(None, f"tree:{identity}", {}, {}, uncarried=uncarried, vcs=False)

    def plain_files(self) -> dict[str, str]:
        """path -> blob id of every file under a non-git root (skipping any `.git`)."""
        return self.files.walk()[0]

    def head_index(self, state: WorkTreeState) -> dict[str, str]:
        """path -> blob id of the committed snapshot (`{rev}`)."""
        if state.tree is None:
            return self.plain_files()
        entries = self.tree_entries(state.tree)  # most blobs are their work-tree copies' bytes
        self.blobs.identify_copies((p, m, s) for p, (m, s) in entries.items())
        ids = self.blob_ids_of([sha1 for _, sha1 in entries.values()])
        return {
            path: ids[sha1]
            for path, (_, sha1) in entries.items()
            if sha1 in ids and uncarried_reason(path) is None
        }

    def left_out(self, state: WorkTreeState, *, with_dirty: bool) -> dict[str, str]:
        """Shown path -> reason for every file the snapshot of *state* leaves out because a
        ChangeSet cannot name it: committed ones (from the tree) and, for the work-tree snapshot
        or a plain directory, the work tree's own. A whole-tree answer over that snapshot has not
        seen those files and must not claim to be complete."""
        missing: dict[str, str] = {}
        if state.tree is not None:
            for path in self.tree_entries(state.tree):
                why = uncarried_reason(path)
                if why is not None:
                    missing[shown(path)] = why
        if with_dirty or state.tree is None:
            missing.update(state.uncarried)
        return missing

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
            found = self.files.hash(path, with_sha1=False)
            return found.blob_id if found is not None else None
        entry = self.tree_entries(state.tree).get(path)
        return None if entry is None else self.blob_ids_of([entry[1]]).get(entry[1])

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
            known = self.blobs.sha1_for(identity)
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

    def oversize(self, identity: str, hint_paths: list[str], tree: str | None) -> int | None:
        """The size of *identity* when it is known and over the blob cap (never loaded), else None."""
        size = self.blobs.size_of_identity(identity)
        if size is not None and size > self.max_blob_bytes:
            return size
        for path in hint_paths:
            found = self.files.hash(path, with_sha1=False)
            if found is not None and found.blob_id == identity and found.size > self.max_blob_bytes:
                return found.size
        if tree is not None and self.is_git:
            entries = self.tree_entries(tree)
            sha1s = [entries[p][1] for p in hint_paths if p in entries]
            self.blob_ids_of(sha1s)
            size = self.blobs.size_of_identity(identity)
            if size is not None and size > self.max_blob_bytes:
                return size
        return None
