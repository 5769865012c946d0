"""What `host/status`, `host/capabilities` and `host/authority/status` read once per request: the
work-tree state and the provider views under its policy (`Snapshot`).

`git status` runs while the provider views, gates and capability coverage are built from the
policy the last reading found (on a 2-core machine the two overlap); when the new state's policy
is another one, the views are built again from it. `snapshot_async` is the same reading for the
event loop: git's answer is awaited on the loop and the state is built there when that needs no
other git command and no large file read (changed files' digests reused or read when small, HEAD
and its policy known); otherwise the rest runs in a worker thread. On the loop a status costs no thread hand-off
in and out, which on a small machine is a tenth of a 1,000-file status.

On the loop the state is also guessed while git runs (`PendingState.guess`: the last answer
again, its files compared now), the views are built under the guessed state's policy, and a
caller's result can be drafted from that guessed snapshot (`snapshot_async(draft=...)`). When
git's answer confirms the guess, what is left after git is a byte comparison and the draft's
timing; otherwise the state is read from the answer and the draft dropped. What the host does
after git answers adds to the status's latency; what it does while git runs, on a second core,
does not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from reference_host.context import HostContext
from reference_host.receipts import Clock
from reference_host.repo.gitstatus import NeedsReading, PendingState
from reference_host.repo.workspace import WorkTreeState
from reference_host.status.providers import Enrollment, enrollments, server_status, views_key
from reference_host.status.rollups import capability_coverage, gate_statuses
from reference_host.trust.policy import EffectivePolicy

Views = tuple[list[Enrollment], list[dict[str, Any]], dict[str, Any], dict[str, Any]]
Drafted = TypeVar("Drafted")


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
    #: whether `.asp/local.json` is there, read once for a drafted `host/status` (None: unread)
    local_override: bool | None = None


def snapshot(ctx: HostContext) -> Snapshot:
    """The request's state and provider views, read in the calling (worker) thread."""
    clock = Clock()
    pending = ctx.workspace.start_state()
    try:
        guess = ctx.recent_policy()
        views = _views(ctx, guess, keep=False) if guess is not None else None
        state = pending.result()
    finally:
        pending.close()
    policy = ctx.policy_for(state)
    return _snapshot(ctx, state, policy, guess, views, clock, keep=False)


@dataclass
class Reading:
    """A request's reading begun (`start_reading`): its clock, and `git status` running — or
    None for a tree that is not git's, which is read in a worker thread. Always `close()` it."""

    clock: Clock
    pending: PendingState[WorkTreeState] | None

    def close(self) -> None:
        if self.pending is not None:
            self.pending.close()


def start_reading(ctx: HostContext) -> Reading:
    """Start `git status` for a request now; the server does it as the request is read, before
    the request's task first runs (asp_protocol/handling.py), so git starts a loop turn sooner."""
    clock = Clock()
    if not ctx.workspace.is_git:  # a plain directory is walked
        return Reading(clock, None)
    return Reading(clock, ctx.workspace.start_state())


async def snapshot_async(
    ctx: HostContext,
    draft: Callable[[Snapshot], Drafted] | None = None,
    reading: Reading | None = None,
    *,
    same_state: bool = True,
) -> tuple[Snapshot, Drafted | None]:
    """`snapshot` on the event loop, with a worker thread only for what could block it; and
    `draft(guessed snapshot)`, made while git runs, when the snapshot turned out to be that one
    (same state, same policy: the draft is then what `draft(snapshot)` gives but its timing) —
    or, not *same_state*, when it has that policy and views (status/drafts.py's drafts).
    *reading*: the one `start_reading` began for this request (closed here), else begun now."""
    reading = reading if reading is not None else start_reading(ctx)
    if reading.pending is None:
        return await anyio.to_thread.run_sync(snapshot, ctx), None
    pending, clock = reading.pending, reading.clock
    drafted: Drafted | None = None
    try:
        guessed = pending.guess()
        if guessed is not None and ctx.knows_policy(guessed):
            guess: EffectivePolicy | None = ctx.policy_for(guessed)
        else:
            guess = ctx.recent_policy()
        views = _views(ctx, guess) if guess is not None else None
        if draft is not None and guessed is not None and guess is not None and views is not None:
            drafted = draft(Snapshot(guessed, guess, *views, clock=clock))
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
    snap = _snapshot(ctx, state, policy, guess, views, clock)
    fits = policy is guess and (state is guessed or not same_state)
    return snap, drafted if fits else None


def _snapshot(
    ctx: HostContext,
    state: WorkTreeState,
    policy: EffectivePolicy,
    guess: EffectivePolicy | None,
    views: Views | None,
    clock: Clock,
    keep: bool = True,
) -> Snapshot:
    if views is None or guess is not policy:
        views = _views(ctx, policy, keep)
    return Snapshot(state, policy, *views, clock=clock)


def _views(ctx: HostContext, policy: EffectivePolicy, keep: bool = True) -> Views:
    """Providers, their status views, gates and capability coverage under *policy*: with
    *keep* (on the event loop, where no provider state changes between the key and the views
    made under it), the kept ones when nothing they are made from changed since (`views_key`),
    else made now and kept; without (a worker thread), made now."""
    if not keep:
        return _make_views(ctx, policy)
    kept = ctx.views_memo.get(views_key(ctx, policy))
    if kept is not None:
        return kept
    views = _make_views(ctx, policy)
    return ctx.views_memo.put(views_key(ctx, policy), views)  # records it made are in the key


def _make_views(ctx: HostContext, policy: EffectivePolicy) -> Views:
    entries = enrollments(ctx, policy)
    servers = [server_status(ctx, policy, e) for e in entries]
    by_id = {s["id"]: s for s in servers}
    gates = gate_statuses(ctx, policy, entries)
    return entries, servers, gates, capability_coverage(ctx, policy, entries, by_id)
