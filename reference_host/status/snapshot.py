"""What `host/status`, `host/capabilities` and `host/authority/status` read once per request: the
work-tree state and the provider views under its policy (`Snapshot`).

`git status` runs while the provider views, gates and capability coverage are built from the
policy the last reading found (on a 2-core machine the two overlap); when the new state's policy
is another one, the views are built again from it. `snapshot_async` is the same reading for the
event loop: git's answer is awaited on the loop and the state is built there when that needs no
other git command and no large file read (changed files' digests reused or read when small, HEAD
and its policy known); otherwise the rest runs in a worker thread. On the loop a status costs no thread hand-off
in and out, which on a small machine is a tenth of a 1,000-file status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from reference_host.context import HostContext
from reference_host.receipts import Clock
from reference_host.repo.gitstatus import NeedsReading, PendingState
from reference_host.repo.workspace import WorkTreeState
from reference_host.status.providers import Enrollment, enrollments, server_status
from reference_host.status.rollups import capability_coverage, gate_statuses
from reference_host.trust.policy import EffectivePolicy

Views = tuple[list[Enrollment], list[dict[str, Any]], dict[str, Any], dict[str, Any]]


@dataclass
class Snapshot:
    """Everything the three status-like results share, computed once per request."""

    state: WorkTreeState
    policy: EffectivePolicy
    entries: list[Enrollment]
    servers: list[dict[str, Any]]
    gates: dict[str, Any]
    capabilities: dict[str, Any]
    clock: Clock = field(default_factory=Clock)  # started when the request's reading began


def snapshot(ctx: HostContext) -> Snapshot:
    """The request's state and provider views, read in the calling (worker) thread."""
    clock = Clock()
    pending = ctx.workspace.start_state()
    try:
        guess, views = _guessed_views(ctx)
        state = pending.result()
    finally:
        pending.close()
    policy = ctx.policy_for(state)
    return _snapshot(ctx, state, policy, guess, views, clock)


async def snapshot_async(ctx: HostContext) -> Snapshot:
    """`snapshot` on the event loop, with a worker thread only for what could block it."""
    clock = Clock()
    if not ctx.workspace.is_git:
        return await anyio.to_thread.run_sync(snapshot, ctx)  # a plain directory is walked
    pending: PendingState[WorkTreeState] = ctx.workspace.start_state()
    try:
        guess, views = _guessed_views(ctx)
        await pending.answered()
        try:
            state = pending.result(on_loop=True)
        except NeedsReading:
            state = await anyio.to_thread.run_sync(pending.result)
    finally:
        pending.close()
    if ctx.knows_policy(state):
        policy = ctx.policy_for(state)
    else:
        policy = await anyio.to_thread.run_sync(ctx.policy_for, state)
    return _snapshot(ctx, state, policy, guess, views, clock)


def _guessed_views(ctx: HostContext) -> tuple[EffectivePolicy | None, Views | None]:
    guess = ctx.recent_policy()
    return guess, (_views(ctx, guess) if guess is not None else None)


def _snapshot(
    ctx: HostContext,
    state: WorkTreeState,
    policy: EffectivePolicy,
    guess: EffectivePolicy | None,
    views: Views | None,
    clock: Clock,
) -> Snapshot:
    if views is None or guess is not policy:
        views = _views(ctx, policy)
    return Snapshot(state, policy, *views, clock=clock)


def _views(ctx: HostContext, policy: EffectivePolicy) -> Views:
    """Providers, their status views, gates and capability coverage under *policy*."""
    entries = enrollments(ctx, policy)
    servers = [server_status(ctx, policy, e) for e in entries]
    by_id = {s["id"]: s for s in servers}
    gates = gate_statuses(ctx, policy, entries)
    return entries, servers, gates, capability_coverage(ctx, policy, entries, by_id)
