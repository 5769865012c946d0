"""`host/queryInspect`: read-only inspect through the enrolled inspect providers (docs/architecture.md#protocol-map).

`request = {verb, ...}` is mapped to the provider's `sense/<verb>` params (`inspect/<verb>` when the
provider lists it), answered as of the effective baseline — the request's `baseline` when it is the
committed or the current snapshot, else the current work-tree snapshot — with host freshness and
shape checks, host coverage and a receipt of kind `inspect`. Providers: the policy's requirements
with the `inspect` capability at this call-site (pinned, with authority), else every trusted
provider whose manifest declares `inspect` (advisory). A missing, crashed, stale or malformed
provider is degraded coverage, never an empty success.

Request keys: `verb` (symbols|references|callers|callees|impact); `query` or `path` (symbols);
`symbol` (a string id, dotted name or bare name, or a symbolRef object), `scope`, `depth`;
`changeset` or `paths` (impact: `paths` means "these baseline files change"); `kinds`; `limit`.
`pageBytes` bounds each provider's page (default 256 KiB) and `cursor` asks for the next one
(`paging.py`); every result says where its page is in `data.page`.
Params intake is `params.py`; choosing and running the providers `targets.py`.
"""

from __future__ import annotations

from typing import Any

import anyio

from asp_protocol.jsonrpc import RequestContext
from reference_host.candidate import (
    Blobs,
    baseline_is_current,
    blob_scope,
    left_out_degradation,
    load_blobs,
    unusable_detail,
)
from reference_host.context import HostContext
from reference_host.coverage import degradation, no_provider
from reference_host.inspect.paging import (
    decode_cursor,
    oversized,
    page_bytes,
    paginate,
    provider_page_bytes,
    question_digest,
)
from reference_host.inspect.params import METHOD, parse_params, provider_params
from reference_host.inspect.snapshots import snapshot, work_tree_state
from reference_host.inspect.targets import inspect_targets, run_target
from reference_host.providers.memory import HOST_HEAP
from reference_host.receipts import Clock, ReceiptRequest, assurance_block, build_receipt
from reference_host.repo.workspace import WorkTreeState
from reference_host.trust.policy import parse_policy
from reference_host.trust.targets import judge_authority, receipt_parties


def _effective_baseline(
    state: WorkTreeState, asked: dict[str, Any] | None
) -> tuple[dict[str, Any], bool]:
    """The baseline to answer as of, and whether it is fresh (committed or current snapshot)."""
    if asked is None:
        return state.baseline(), True
    return {k: asked[k] for k in ("rev", "dirty") if k in asked}, baseline_is_current(asked, state)


async def query_inspect(
    ctx: HostContext, params: Any, rpc: RequestContext | None = None
) -> dict[str, Any]:
    """The `queryInspectResult` for *params* (outer-host.schema.json#/$defs/queryInspectParams)."""
    clock = Clock()
    inspect = parse_params(params)
    call_site, request = inspect.call_site, inspect.request
    # the providers the last known policy (else the default) would ask start while git reads
    # the work tree: their start-up does not wait for the snapshot `initialize` needs
    guessed, _ = inspect_targets(ctx, ctx.recent_policy() or parse_policy(None), call_site)
    for target in guessed:
        await ctx.supervisor.prelaunch(target.provider_id, "inspect")
    state = await work_tree_state(ctx)
    policy = await anyio.to_thread.run_sync(ctx.policy_for, state)
    baseline, fresh = _effective_baseline(state, inspect.baseline)
    with_dirty = "dirty" in baseline
    snap = await snapshot(ctx, state, with_dirty)
    index = snap.index
    targets, required = inspect_targets(ctx, policy, call_site)
    await ctx.supervisor.discard_spawned("inspect", {t.provider_id for t in targets})
    host_degraded: list[dict[str, Any]] = []
    if not targets:
        host_degraded.append(no_provider("inspect", bool(required)))
    stale = (
        None
        if fresh
        else (
            f"requested baseline is neither the committed snapshot nor the current work tree (host has rev {state.rev})"
        )
    )
    if snap.left_out:
        host_degraded.append(
            left_out_degradation(snap.left_out, "file(s) not in the snapshot inspected", "inspect")
        )
    unusable = unusable_detail(state)
    if unusable is not None:
        host_degraded.append(degradation("git", "unavailable", unusable, capability="inspect"))
        stale = unusable
    question = question_digest(request, baseline)
    offset, bound = decode_cursor(request, question), page_bytes(request)
    provider_request = provider_params(request, baseline, index, snap.ordered) if fresh else {}
    if fresh:
        provider_request["pageBytes"] = provider_page_bytes(bound)
        if offset:
            provider_request["offset"] = offset
    blobs = Blobs()
    if fresh and request["verb"] == "impact":
        blobs = await anyio.to_thread.run_sync(
            load_blobs, ctx, state, provider_request["changeset"], with_dirty
        )
        if blobs.problems:
            stale = "changeset does not match the baseline: " + "; ".join(blobs.problems)
    if stale is not None:
        for target in targets:
            target.degraded.append(
                degradation(
                    target.provider_id,
                    "unavailable" if unusable is not None else "stale-baseline",
                    stale,
                    requirement=target.requirement_id,
                    capability="inspect",
                )
            )
    elif targets:
        allowed = snap.blobs | set(blobs.referenced) if blobs.referenced else snap.blobs
        budget = min(policy.budget_ms(call_site), inspect.timeout_ms or 10**9)
        deadline = anyio.current_time() + budget / 1000
        async with anyio.create_task_group() as tg:
            for target in targets:
                scope = blob_scope(ctx, state, baseline, blobs, lambda: index, snap.by_blob)
                tg.start_soon(
                    run_target, ctx, target, request, provider_request, scope, allowed, deadline
                )
    for target in targets:
        if not judge_authority(ctx, target, policy, call_site) and target.pin is not None:
            target.ran = False  # an ungranted answer covers nothing
        if target.result is None or not target.ran:
            continue
        size = oversized(target.size, bound)
        if size is not None:
            target.result, target.ran = None, False
            target.degraded.append(
                degradation(
                    target.provider_id,
                    "malformed",
                    f"answer page of {size} bytes exceeds the page bound of {bound} bytes",
                    requirement=target.requirement_id,
                    capability="inspect",
                )
            )
        elif paginate(request["verb"], target.result, offset, bound, question):
            target.truncated = True
    # an answer's line, its parse and its checks are garbage once sent: counted with the blob
    # bytes served, so a burst of large pages is given back every few MiB (providers/memory.py)
    await HOST_HEAP.trim_if_due(sum(t.size for t in targets))
    degraded = host_degraded + [d for t in targets for d in t.degraded]
    ran = [t.coverage_id for t in targets if t.ran]
    blobs_all = sorted({b for t in targets if t.ran for b in t.blobs})
    coverage = {
        "exhaustive": bool(targets) and not degraded and not any(t.truncated for t in targets),
        "required": required,
        "enrolled": list(required),
        "ran": ran,
        "degraded": degraded,
    }
    valid = {"rev": baseline["rev"], "blobs": blobs_all}
    assurance = assurance_block(ctx.assurance_mode)
    receipt = build_receipt(
        "inspect",
        ReceiptRequest(METHOD, params, clock, policy.digest, baseline, assurance, call_site),
        valid,
        coverage,
        receipt_parties(targets, ran),
        capability_family="inspect",
    )
    results = [
        {"provider": t.provider_id, "result": t.result}
        for t in targets
        if t.ran and t.result is not None
    ]
    return {
        "data": {"results": results},
        "validAsOf": valid,
        "coverage": coverage,
        "receipt": receipt,
    }
