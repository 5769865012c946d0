"""Results of `host/status`, `host/capabilities` and `host/authority/status`.

Per-provider state is `providers.py`, gate and family roll-ups `rollups.py`.
Status is cheap by design: it reads one `git status`, the cached baseline policy and the trusted
manifests, and never launches a provider (an unlaunched provider shows `installed`). The host
serves `check` and `inspect`: `check` is available through an enrolled provider; `inspect` also
through an advisory trusted provider (e.g. the built-in `asp-python-inspect`) while no policy
requirement asks for inspect; `edit` through any available trusted edit provider (a plan needs
no authority; applying one needs an edit requirement pinning the provider).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from asp_protocol import OUTER_PROTOCOL
from asp_protocol.framing import EncodedJson, UnencodableMessage, compact_json
from asp_protocol.vocabulary import CALL_SITES, CAPABILITY_FAMILIES, LEGACY_ROLE
from reference_host import HOST_NAME, __version__
from reference_host.candidate import unusable_detail
from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.receipts import (
    Clock,
    ReceiptParties,
    ReceiptRequest,
    assurance_block,
    build_receipt,
)
from reference_host.status.drafts import Draft, filled, for_state, template
from reference_host.status.memo import Identity, Memo
from reference_host.status.snapshot import Reading, Snapshot, snapshot, snapshot_async

StatusLike = Callable[[HostContext, Any, Snapshot], dict[str, Any]]

LOCAL_OVERRIDE = ".asp/local.json"


def _workspace_degraded(snap: Snapshot) -> list[dict[str, Any]]:
    """git that cannot be used is degraded coverage on every status-like result."""
    detail = unusable_detail(snap.state)
    return [degradation("git", "unavailable", detail)] if detail is not None else []


def _coverage(snap: Snapshot, degraded: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-exhaustive coverage every status-like result reports: nothing ran."""
    required = list(dict.fromkeys(r for s in CALL_SITES for r in snap.policy.required_ids(s)))
    return {
        "exhaustive": False,
        "required": required,
        "enrolled": required,
        "ran": [],
        "degraded": degraded,
    }


def _rollup(snap: Snapshot) -> list[dict[str, Any]]:
    """The gates' distinct degradations, after the workspace's own (status, capabilities)."""
    gates = snap.gates.values()
    return _unique(_workspace_degraded(snap) + [d for g in gates for d in g["degraded"]])


def _status_receipt(
    ctx: HostContext,
    snap: Snapshot,
    kind: str,
    method: str,
    params: Any,
    clock: Clock,
    degraded: list[dict[str, Any]],
) -> dict[str, Any]:
    enrolled = [e for e in snap.entries if e.pins]
    evidence, provenance, ids = [], [], []
    for entry in enrolled:
        pin = entry.pins[0]
        evidence.append(pin.evidence)
        if entry.record.installed is not None:
            provenance.append(ctx.provenance(entry.id, "check", pin.check))
        ids.extend([entry.id, pin.requirement_id])
    baseline = snap.state.baseline()
    request = ReceiptRequest(
        method,
        params if params is not None else {},
        clock,
        snap.policy.digest,
        baseline,
        assurance_block(ctx.assurance_mode),
    )
    parties = ReceiptParties(authority_evidence=evidence, provider_ids=ids, provenance=provenance)
    return build_receipt(
        kind, request, {"rev": baseline["rev"]}, _coverage(snap, degraded), parties
    )


def local_override(ctx: HostContext) -> bool:
    """Whether the work tree holds a local override file (advisory only: shown, never obeyed)."""
    return ctx.workspace.read_work_file(LOCAL_OVERRIDE) is not None


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def host_status(ctx: HostContext, params: Any, snap: Snapshot | None = None) -> dict[str, Any]:
    snap = snap or snapshot(ctx)
    clock = snap.clock
    gates, capabilities, degraded = snap.gates, snap.capabilities, _rollup(snap)
    baseline = snap.state.baseline()
    override = snap.local_override
    if override is None:
        override = local_override(ctx)
    policy_block: dict[str, Any] = {
        "source": snap.policy.source,
        "activation": snap.policy.activation,
        "policyDigest": snap.policy.digest,
        "localOverride": {
            "present": override,
            "path": LOCAL_OVERRIDE if override else None,
            "authorityEffect": "none",
            "detail": "a local override is advisory only and never affects gate authority",
        },
    }
    workspace: dict[str, Any] = {
        "root": str(ctx.workspace.root),
        "baseline": baseline,
        "validAsOf": dict(baseline),
    }
    stale = []
    if snap.state.unusable is not None:
        stale.append(
            f"git cannot be used (the host never sets safe.directory): {snap.state.unusable}"
        )
    if snap.policy.activation != "active":
        stale.append(f"repository policy rejected: {snap.policy.error}")
    if stale:
        workspace["staleReason"] = "; ".join(stale)[:1000]
    return {
        "host": {
            "name": HOST_NAME,
            "version": __version__,
            "outerProtocol": OUTER_PROTOCOL,
            "state": "ready" if not degraded else "degraded",
            "bindingCandidate": "json-rpc-stdio",
        },
        "workspace": workspace,
        "policy": policy_block,
        "servers": snap.servers,
        "gates": gates,
        "capabilities": capabilities,
        "assuranceCapabilities": ["advisory", "gated"]
        if ctx.assurance_mode == "gated"
        else ["advisory"],
        "receipt": _status_receipt(ctx, snap, "status", "host/status", params, clock, degraded),
    }


def host_capabilities(
    ctx: HostContext, params: Any, snap: Snapshot | None = None
) -> dict[str, Any]:
    snap = snap or snapshot(ctx)
    clock = snap.clock
    capabilities, degraded = snap.capabilities, _rollup(snap)
    return {
        "capabilities": capabilities,
        "sources": snap.servers,
        "coverage": _coverage(snap, degraded),
        "legacyRoles": {
            LEGACY_ROLE[family]: capabilities[family]["available"] for family in CAPABILITY_FAMILIES
        },
        "receipt": _status_receipt(
            ctx, snap, "capabilities", "host/capabilities", params, clock, degraded
        ),
    }


def host_authority_status(
    ctx: HostContext, params: Any, snap: Snapshot | None = None
) -> dict[str, Any]:
    snap = snap or snapshot(ctx)
    clock = snap.clock
    degraded = _unique(
        _workspace_degraded(snap) + [d for e in snap.entries if e.pins for d in e.degraded["check"]]
    )
    receipt = _status_receipt(
        ctx, snap, "authority-status", "host/authority/status", params, clock, degraded
    )
    return {
        "policyActivation": "base-active",
        "policyDigest": snap.policy.digest,
        "providers": snap.servers,
        "receipt": receipt,
    }


async def status_like_async(
    fn: StatusLike, ctx: HostContext, params: Any, reading: Reading | None = None
) -> dict[str, Any]:
    """`fn(ctx, params, snapshot)` for the event loop: drafted while git runs when the last
    reading predicts the snapshot (status/snapshot.py), then only its receipt's `issuedAt` and
    `timing` — the two stamps `build_receipt` takes at build time — are taken again."""
    snap, drafted = await snapshot_async(ctx, lambda guess: fn(ctx, params, guess), reading)
    if drafted is None:
        return fn(ctx, params, snap)
    receipt = drafted["receipt"]
    receipt["timing"] = snap.clock.timing()
    receipt["issuedAt"] = receipt["timing"]["endedAt"]  # one clock reading, not two
    return drafted


async def status_like_wire(
    fn: StatusLike, ctx: HostContext, params: Any, reading: Reading | None
) -> dict[str, Any] | EncodedJson:
    """`status_like_async` for the wire: drafted and encoded while git runs with placeholders
    for the state's rev and dirty digest and the stamps, which are put in once git has answered
    (status/drafts.py); else built after git. The draft is kept (`HostContext.drafts_memo`)
    and reused while every input it was made from is the same (`_draft_key`)."""

    def make(guess: Snapshot) -> Draft | None:
        guess.clock.started_at()  # formatted now, while git runs, not when stamped
        guess = replace(guess, local_override=local_override(ctx))
        key = _draft_key(fn, ctx, params, guess)
        memo = ctx.drafts_memo.setdefault(fn, Memo())
        made = memo.get(key) or template(lambda snap: fn(ctx, params, snap), guess)
        return memo.put(key, for_state(made, guess.state)) if made is not None else None

    snap, drafted = await snapshot_async(ctx, make, reading, same_state=False)
    answer = filled(drafted, snap.state, snap.clock) if drafted is not None else None
    return answer if answer is not None else fn(ctx, params, snap)


def _draft_key(fn: StatusLike, ctx: HostContext, params: Any, guess: Snapshot) -> object:
    """Everything the three status-like answers are made from but the state's rev and dirty
    digest and the stamps (the draft's placeholders): the very policy and provider views (kept
    while their own inputs are the same, status/snapshot.py), whether there is a dirty digest,
    the local override, the params as encoded, the work tree's root and the assurance mode.
    None (not kept) for any other function, whose inputs this key does not know."""
    if fn not in (host_status, host_capabilities, host_authority_status):
        return None
    try:
        encoded = compact_json(params)
    except UnencodableMessage:
        return None
    views = (guess.policy, guess.entries, guess.servers, guess.gates, guess.capabilities)
    return (
        encoded,
        tuple(map(Identity, views)),
        guess.state.dirty is not None,
        guess.local_override,
        str(ctx.workspace.root),
        ctx.assurance_mode,
    )
