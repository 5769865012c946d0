"""A ChangeSet's candidate content as the host sees it: is its baseline current, its blobs, and
the one loader that serves blob content to a provider's `readBlob`.

Shared by `host/evaluateChangeset` and `host/queryInspect`, so both judge freshness, resolve
`before`/`after` blobs and serve blobs by the same rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.repo.workspace import WorkTreeState
from reference_host.sessions.callbacks import EvaluationScope


def unusable_detail(state: WorkTreeState) -> str | None:
    """The degradation detail when git cannot be used here (no evaluation or answer may count)."""
    if state.unusable is None:
        return None
    return f"git cannot be used in this workspace, nothing was read: {state.unusable}"[:1000]


def uncarried_degradation(paths: dict[str, str]) -> dict[str, Any]:
    """Work-tree paths a ChangeSet cannot carry (names it cannot hold, submodules and their
    edits; `submodules.left_out`): part of the working change, not evaluated."""
    return left_out_degradation(paths, "work-tree path(s) not evaluated", "check")


def left_out_degradation(paths: dict[str, str], what: str, capability: str) -> dict[str, Any]:
    """Files a result could not cover because a ChangeSet cannot name them (shown path -> why),
    as one `incomplete` degradation of source `workspace` that names the first five."""
    names = "; ".join(f"{path}: {why}" for path, why in sorted(paths.items())[:5])
    return degradation(
        "workspace", "incomplete", f"{len(paths)} {what}: {names}", capability=capability
    )


def baseline_is_current(baseline: dict[str, Any], state: WorkTreeState) -> bool:
    """True for the committed snapshot (`{rev}`) or the full current snapshot (`{rev, dirty}`)."""
    return baseline.get("rev") == state.rev and (
        "dirty" not in baseline or baseline.get("dirty") == state.dirty
    )


@dataclass
class Blobs:
    """The changeset's blob bytes, loaded once, and the paths each blob appears under."""

    store: dict[str, bytes] = field(default_factory=dict)
    referenced: dict[str, set[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    too_large: dict[str, int] = field(default_factory=dict)  # path -> size over the blob cap


def load_blobs(
    ctx: HostContext, state: WorkTreeState, changeset: dict[str, Any], with_dirty: bool
) -> Blobs:
    """Resolve every before/after blob and check each `before` against the named baseline."""
    workspace = ctx.workspace
    store: dict[str, bytes] = {}
    referenced: dict[str, set[str]] = {}
    problems: list[str] = []
    too_large: dict[str, int] = {}
    for change in changeset["changes"]:
        path = change["path"]
        origin = change.get("from") or path
        if with_dirty and origin in state.differing:
            expected = state.differing[origin]
        else:
            expected = workspace.head_blob_id(state, origin)
        if change["kind"] == "create" and expected is not None:
            problems.append(f"create of {path} but the baseline already has it")
        elif change["kind"] != "create" and change.get("before") != expected:
            problems.append(f"before blob of {origin} does not match the baseline")
        for key, hints in (("before", [origin, path]), ("after", [path])):
            identity = change.get(key)
            if identity is None:
                continue
            referenced.setdefault(identity, set()).update(hints)
            if identity in store:
                continue
            data = workspace.resolve(identity, hints, state.tree)
            if data is not None:
                store[identity] = data
                continue
            size = workspace.oversize(identity, hints, state.tree)
            if size is not None:
                too_large[path] = size  # known content, deliberately not loaded
            else:
                problems.append(f"blob_unavailable: {identity} ({key} of {path})")
    problems.sort(key=lambda p: not p.startswith("blob_unavailable"))
    return Blobs(store, referenced, problems, too_large)


def blob_scope(
    ctx: HostContext,
    state: WorkTreeState,
    baseline: dict[str, Any],
    blobs: Blobs,
    index: Callable[[], dict[str, str]],
    by_blob: dict[str, list[str]] | None = None,
) -> EvaluationScope:
    """What one provider request may read: the changeset's blobs and the baseline snapshot.

    A blob already loaded for the changeset is served from memory; any other is resolved from the
    work tree or git under the paths it appears at (the changeset's, else the snapshot index's).
    `index` is the baseline snapshot (path -> blob id), computed lazily off the event loop, and
    *by_blob* its reverse map when the caller already has one. A readBlob batch is resolved in
    one trip off the event loop (`load_many`).
    """

    def resolve(identity: str, baseline_paths: list[str]) -> bytes | None:
        data = blobs.store.get(identity)
        if data is not None:
            return data
        paths = sorted(blobs.referenced.get(identity, ())) or baseline_paths
        return ctx.workspace.resolve(identity, paths, state.tree)

    async def paths_of(identity: str) -> list[str]:
        # the baseline's paths only for a blob the changeset does not name: finding them needs
        # the whole snapshot's ids, which a first snapshot of a large tree reads every blob for
        # (Home Assistant: a one-file evaluation hashed 45,750 files it never served)
        if identity in blobs.store or identity in blobs.referenced:
            return []
        return await scope.baseline_paths(identity)

    async def load(identity: str) -> bytes | None:
        paths = await paths_of(identity)
        return await anyio.to_thread.run_sync(resolve, identity, paths)

    async def load_many(identities: list[str]) -> dict[str, bytes]:
        paths = {i: await paths_of(i) for i in identities}

        def resolve_all() -> dict[str, bytes]:
            # one git stream for the batch's committed blobs, then each is resolved from memory:
            # resolved one by one, each blob missing from the byte cache (64 MiB: less than a
            # large tree) started its own `git cat-file`
            known = [ctx.workspace.blobs.sha1_for(i) for i in identities if i not in blobs.store]
            sha1s = [sha1 for sha1 in known if sha1 is not None]
            if len(sha1s) > 1:
                ctx.workspace.git_blobs(sha1s)
            found = {i: resolve(i, paths[i]) for i in identities}
            return {i: data for i, data in found.items() if data is not None}

        return await anyio.to_thread.run_sync(resolve_all)

    def links() -> frozenset[str]:
        """The snapshot's symbolic links: HEAD's, less the paths a dirty overlay replaced (those
        are listed as files, as before kinds were reported)."""
        if state.tree is None or not ctx.workspace.is_git:
            return frozenset()
        found = ctx.workspace.blobs.links_of(state.tree)
        return found.difference(state.differing) if "dirty" in baseline else found

    scope = EvaluationScope(
        baseline=baseline,
        index=index,
        referenced=blobs.referenced,
        load=load,
        load_many=load_many,
        by_blob=by_blob,
        links=links,
    )
    return scope


def too_large_detail(too_large: dict[str, int], cap: int) -> str:
    """The degradation detail for blobs over the cap: never loaded, so never checked."""
    shown = ", ".join(f"{path} ({size} bytes)" for path, size in sorted(too_large.items())[:10])
    return f"too large: {shown} over the {cap}-byte blob limit, not loaded for providers"[:1000]
