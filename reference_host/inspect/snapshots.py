"""The work-tree snapshot an inspect query is answered as of, kept between queries.

A warm inspect query should cost what the question costs, not what the repository costs: the
`git status` behind the work-tree state, the path -> blob index of the snapshot and its reverse
map all grow with the repository. So a query reuses the last state when the tree watcher
(`watch.py`) saw no file-system event at all since that state was read, and the index of a
snapshot is rebuilt only when the snapshot itself changed (another HEAD tree or other work-tree
differences). Without a working watcher every query reads the state afresh.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import anyio

from reference_host.context import HostContext
from reference_host.inspect.watch import TreeWatcher
from reference_host.providers.memory import release_free_memory
from reference_host.repo.workspace import Workspace, WorkTreeState

MAX_SNAPSHOTS = 4


@dataclass(frozen=True)
class Snapshot:
    """One snapshot's index (path -> blob id), its blob set, its blob -> paths map, and the files
    it leaves out because no ChangeSet can name them (shown path -> reason)."""

    index: dict[str, str]
    blobs: frozenset[str]
    by_blob: dict[str, list[str]]
    left_out: dict[str, str] = field(default_factory=dict)

    @cached_property
    def ordered(self) -> list[str]:
        """The index's paths sorted, once per snapshot (impact's `paths` are looked up in it)."""
        return sorted(self.index)


@dataclass
class _Recent:
    watcher: TreeWatcher
    state: WorkTreeState | None = None
    snapshots: dict[tuple[object, ...], Snapshot] = field(default_factory=dict)


_RECENT: weakref.WeakKeyDictionary[Workspace, _Recent] = weakref.WeakKeyDictionary()


def _recent(ctx: HostContext) -> _Recent:
    found = _RECENT.get(ctx.workspace)
    if found is None:
        found = _RECENT[ctx.workspace] = _Recent(TreeWatcher(Path(ctx.workspace.root)))
        weakref.finalize(ctx.workspace, found.watcher.close)
    return found


async def work_tree_state(ctx: HostContext) -> WorkTreeState:
    """The work tree's state: the last one read while nothing changed since, else read afresh."""
    recent = _recent(ctx)
    if recent.state is not None and recent.watcher.unchanged():
        return recent.state
    recent.state = None
    await anyio.to_thread.run_sync(recent.watcher.arm)
    state = await anyio.to_thread.run_sync(ctx.workspace.state)
    recent.state = state
    return state


async def snapshot(ctx: HostContext, state: WorkTreeState, with_dirty: bool) -> Snapshot:
    """The index of *state*'s snapshot (committed, or with the work tree when *with_dirty*)."""
    differing = tuple(sorted(state.differing.items())) if with_dirty else ()
    key = (state.tree, state.rev, with_dirty, differing)
    recent = _recent(ctx)
    cached = recent.snapshots.get(key)
    if cached is not None:
        return cached

    def build() -> tuple[dict[str, str], dict[str, str]]:
        made = ctx.workspace.snapshot_index(state, with_dirty=with_dirty)
        release_free_memory()  # it read, and freed, the bytes of every blob it names
        return made, ctx.workspace.left_out(state, with_dirty=with_dirty)

    index, left_out = await anyio.to_thread.run_sync(build)
    by_blob: dict[str, list[str]] = {}
    for path, blob in index.items():
        by_blob.setdefault(blob, []).append(path)
    made = Snapshot(index, frozenset(index.values()), by_blob, left_out)
    if len(recent.snapshots) >= MAX_SNAPSHOTS:
        recent.snapshots.clear()
    recent.snapshots[key] = made
    return made
