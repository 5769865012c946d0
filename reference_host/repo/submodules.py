"""Edits inside submodules: the part of a working change the host's `git status` leaves out.

The host's status runs with `--ignore-submodules=dirty` (`gitstatus.STATUS_ARGS`): git then reads
only which commit each submodule has checked out and never works inside it. That also hid an edit
made inside a submodule. A working change whose only edit was `lib/a.py`, in submodule `lib`,
was an empty ChangeSet, and its evaluation was `allow`: checked, about a file nobody read.

A ChangeSet cannot carry such a path (this repository's tree holds a commit at `lib`, not
files), so these edits are reported beside the change, as `uncarried` paths are: listed by
`host/workingChangeset`, and every evaluation while they exist is degraded (never `allow`),
naming the submodule. Each checked-out submodule is read by a `GitRunner` of its own: the same
pinned configuration, the drivers *its* configuration names blanked first (the workspace's
reading does not cover them), and `git status` kept out of its own submodules, which are read
the same way down to `MAX_DEPTH` levels. Index flags that make git skip a file
(`--assume-unchanged`, `--skip-worktree`) hide edits from this status too; a submodule that has
any is reported as one whose edits cannot be told.

Only `host/workingChangeset` and `host/evaluateChangeset` ask: a status stays one git process,
and its `dirty` digest does not see edits inside a submodule (docs/workspace-git.md).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from reference_host.repo.git import GitRunner, GitUnusable
from reference_host.repo.gitindex import flagged
from reference_host.repo.workfiles import shown

if TYPE_CHECKING:
    from reference_host.repo.workspace import Workspace, WorkTreeState

MAX_DEPTH = 4
#: Submodules read per request; past this the rest are reported unread, never assumed clean.
MAX_SUBMODULES = 64
_STATUS = (
    "status",
    "--porcelain=v2",
    "-z",
    "--no-renames",
    "--untracked-files=normal",
    "--ignore-submodules=dirty",
)
NOT_READ = (
    "the host reads nothing inside a submodule and a ChangeSet cannot carry its files, so these "
    "edits are not evaluated: commit them in the submodule, or run a host on it"
)


def left_out(workspace: Workspace, state: WorkTreeState) -> dict[str, str]:
    """Every work-tree path of *state* that its ChangeSet cannot carry (shown path -> why): its
    `uncarried` paths and the submodules holding work not committed in them."""
    if state.tree is None or not state.vcs or state.unusable is not None:
        return dict(state.uncarried)
    try:
        gitlinks = workspace.blobs.gitlinks_of(state.tree)
    except GitUnusable as exc:
        return {**state.uncarried, ".": f"git could not list the submodules: {exc.reason[:200]}"}
    if not gitlinks:
        return dict(state.uncarried)
    edits = submodule_edits(workspace.root, workspace.runner.env, gitlinks, state.uncarried)
    return {**state.uncarried, **edits}


def submodule_edits(
    root: Path, env: dict[str, str], gitlinks: frozenset[str], skip: dict[str, str]
) -> dict[str, str]:
    """Shown path -> why, for each submodule at *gitlinks* (paths in *root*'s HEAD tree) that
    holds work not committed in it or that cannot be read. Paths in *skip* (already uncarried,
    e.g. moved to another commit) are not read again."""
    walk = _Walk(root, env, skip)
    walk.visit(root, "", sorted(gitlinks), 1)
    return walk.found


#: One runner per submodule folder, kept so that its driver reading is reused while the
#: submodule's configuration files are byte-identical (`GitRunner.refresh_drivers`).
_RUNNERS: OrderedDict[tuple[Path, tuple[tuple[str, str], ...]], GitRunner] = OrderedDict()


def _runner(directory: Path, env: dict[str, str]) -> GitRunner:
    key = (directory, tuple(sorted(env.items())))
    runner = _RUNNERS.get(key)
    if runner is None:
        runner = _RUNNERS[key] = GitRunner(directory, env=dict(env))
        while len(_RUNNERS) > MAX_SUBMODULES:
            _RUNNERS.popitem(last=False)
    _RUNNERS.move_to_end(key)
    return runner


class _Walk:
    """One request's walk over the submodules: what it found and how many it may still read."""

    def __init__(self, root: Path, env: dict[str, str], skip: dict[str, str]) -> None:
        self.root, self.env, self.skip = root.resolve(), env, skip
        self.found: dict[str, str] = {}
        self.budget = MAX_SUBMODULES

    def visit(self, root: Path, prefix: str, paths: list[str], depth: int) -> None:
        for path in paths:
            name = shown(prefix + path)
            if name in self.skip:
                continue
            if self.budget <= 0:
                self.found[name] = f"not read: more than {MAX_SUBMODULES} submodules; {NOT_READ}"
                continue
            self.budget -= 1
            why, nested = self.read_one(root / path, name)
            if why is not None:
                self.found[name] = why
            if nested and depth >= MAX_DEPTH:
                deeper = f"holds submodules nested deeper than {MAX_DEPTH} levels; {NOT_READ}"
                self.found[name] = deeper
            elif nested:
                self.visit(root / path, prefix + path + "/", nested, depth + 1)

    def read_one(self, directory: Path, name: str) -> tuple[str | None, list[str]]:
        """(why the submodule at *directory* (shown as *name*) is not clean or None, its own
        submodules' paths)."""
        if os.path.islink(directory):
            return None, []  # git reports a link where a submodule was as this repository's change
        if not directory.resolve().is_relative_to(self.root):
            # a folder on the way is a link out of the workspace: git must not be run out there
            return f"its folder is reached through a link out of the workspace; {NOT_READ}", []
        if not os.path.lexists(directory / ".git"):
            try:
                present = any(os.scandir(directory))
            except OSError:
                return None, []  # not checked out, nothing there
            if present:
                return f"files in the folder of a submodule that is not checked out; {NOT_READ}", []
            return None, []
        runner = _runner(directory, self.env)
        try:
            runner.refresh_drivers()
            status = runner.run(*_STATUS)
            listing = runner.run("ls-files", "-v", "-s", "-z") if status.ok else status
        except GitUnusable as exc:
            return f"git cannot read this submodule ({exc.reason[:200]}); {NOT_READ}", []
        if not status.ok or not listing.ok:
            reason = (status if not status.ok else listing).reason()
            return f"git cannot read this submodule ({reason[:200]}); {NOT_READ}", []
        changed = [r for r in status.stdout.split(b"\0") if r[:2] in (b"1 ", b"u ", b"? ")]
        tagged, nested = _index_entries(listing.stdout)
        hidden = flagged(b"\0".join(tagged), directory)
        if changed:
            first = shown(f"{name}/{_record_path(changed[0])}")
            return f"{len(changed)} path(s) changed inside it, e.g. {first}; {NOT_READ}", nested
        if hidden:
            example = shown(f"{name}/{hidden[0]}")
            why = (
                f"{len(hidden)} file(s) its index tells git to skip (assume-unchanged or "
                f"skip-worktree), e.g. {example}, so their edits cannot be told; {NOT_READ}"
            )
            return why, nested
        return None, nested


def _record_path(record: bytes) -> str:
    """The path of one `git status --porcelain=v2` changed, unmerged or untracked record."""
    fields = {b"1 ": 8, b"u ": 10}.get(record[:2])
    raw = record[2:] if fields is None else record.split(b" ", fields)[-1]
    return os.fsdecode(raw)


def _index_entries(listing: bytes) -> tuple[list[bytes], list[str]]:
    """`ls-files -v -s -z` records as `ls-files -v` would print them (tag, space, path), and the
    paths of the index's submodules (mode 160000)."""
    tagged: list[bytes] = []
    nested: list[str] = []
    for record in listing.split(b"\0"):
        meta, tab, name = record.partition(b"\t")
        if not tab or len(meta) < 3:
            continue
        tagged.append(meta[:2] + name)
        if meta[2:].startswith(b"160000 "):
            nested.append(os.fsdecode(name))
    return tagged, nested
