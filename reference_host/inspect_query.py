"""`host/queryInspect`: read-only inspect through the enrolled inspect providers (PROTOCOL §3.5, §6.9).

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
`cursor` is accepted and ignored (pagination belongs to the caller's rendering).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import anyio
from pydantic import ValidationError

from asp_protocol.canonical import request_digest
from asp_protocol.changesets import PathError, validate_path
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.jsonrpc import RequestContext
from asp_protocol.models import CallSite, ChangeSet, DegradationReason
from reference_host.candidate import baseline_is_current, load_blobs
from reference_host.context import HostContext
from reference_host.decision import degradation
from reference_host.inspect_session import INSPECT_VERBS, InspectProviderSession
from reference_host.inspect_validation import check_inspect_result
from reference_host.manifests import NOT_CLAIMED
from reference_host.policy import CALL_SITES, EffectivePolicy, PinnedProvider
from reference_host.receipts import Clock, assurance_block, build_receipt
from reference_host.session import SessionFailure
from reference_host.session_callbacks import EvaluationScope
from reference_host.workspace import WorkTreeState

METHOD = "host/queryInspect"
PARAM_KEYS = frozenset({"callSite", "request", "baseline", "timeoutMs"})
REQUEST_KEYS = frozenset(
    {
        "verb",
        "query",
        "path",
        "symbol",
        "scope",
        "depth",
        "changeset",
        "paths",
        "kinds",
        "limit",
        "cursor",
    }
)
MAX_IMPACT_PATHS = 500


def _invalid(message: str, detail: str | None = None) -> AspError:
    return AspError(ErrorCode.INVALID_PARAMS, message, detail=detail)


@dataclass
class Target:
    """One provider asked to answer: for a requirement (pinned) or advisory."""

    provider_id: str
    coverage_id: str
    role: str
    pin: PinnedProvider | None = None
    requirement_id: str | None = None
    degraded: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    blobs: tuple[str, ...] = ()
    truncated: bool = False
    ran: bool = False
    evidence: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None


def parse_params(params: Any) -> tuple[CallSite, dict[str, Any], dict[str, Any] | None, int | None]:
    if not isinstance(params, dict):
        raise _invalid("params must be an object")
    unknown = sorted(set(params) - PARAM_KEYS)
    if unknown:
        raise _invalid("unknown parameter(s)", ", ".join(unknown)[:200])
    call_site = params.get("callSite")
    if call_site not in CALL_SITES:
        raise _invalid("callSite must be interactive, gate or sweep", repr(call_site)[:100])
    request = params.get("request")
    if not isinstance(request, dict):
        raise _invalid("request must be an object")
    if request.get("verb") not in INSPECT_VERBS:
        raise _invalid(
            f"request.verb must be one of {', '.join(INSPECT_VERBS)}",
            repr(request.get("verb"))[:100],
        )
    extra = sorted(set(request) - REQUEST_KEYS)
    if extra:
        raise _invalid("unknown request key(s)", ", ".join(extra)[:200])
    baseline = params.get("baseline")
    if baseline is not None and (
        not isinstance(baseline, dict) or not isinstance(baseline.get("rev"), str)
    ):
        raise _invalid("baseline must be an object with a rev string")
    timeout = params.get("timeoutMs")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1
    ):
        raise _invalid("timeoutMs must be a positive integer")
    return cast(CallSite, call_site), request, baseline, timeout


def _symbol(value: Any) -> dict[str, Any]:
    if isinstance(value, str) and value.strip():
        return {"id": value.strip()}
    if isinstance(value, dict):
        return value
    raise _invalid("request.symbol must be a non-empty string or a symbolRef object")


def provider_params(
    request: dict[str, Any], baseline: dict[str, Any], index: dict[str, str]
) -> dict[str, Any]:
    """The provider's `sense/<verb>` params for an outer `request` (shapes of sense-requests.schema)."""
    verb = request["verb"]
    out: dict[str, Any] = {}
    if verb == "symbols":
        query = request.get("query", request.get("path", ""))
        if not isinstance(query, str):
            raise _invalid("request.query / request.path must be a string")
        out["query"] = query
        if "kinds" in request:
            out["kinds"] = request["kinds"]
    elif verb == "impact":
        out["changeset"] = _impact_changeset(request, baseline, index)
        out["scope"] = request.get("scope", "workspace")
    else:
        out["symbol"] = _symbol(request.get("symbol"))
        if verb == "references" and "scope" in request:
            out["scope"] = request["scope"]
    if verb in ("callers", "callees", "impact") and "depth" in request:
        out["depth"] = request["depth"]
    if "limit" in request:
        out["limit"] = request["limit"]
    return out


def _impact_changeset(
    request: dict[str, Any], baseline: dict[str, Any], index: dict[str, str]
) -> dict[str, Any]:
    if "changeset" in request:
        try:
            ChangeSet.model_validate(request["changeset"])
            for change in request["changeset"]["changes"]:
                for path in (change.get("path"), change.get("from")):
                    if path is not None:
                        validate_path(path)
        except (ValidationError, PathError) as exc:
            raise AspError(
                ErrorCode.INVALID_CHANGESET, "malformed changeset", detail=str(exc)[:300]
            ) from None
        return dict(request["changeset"])
    paths = request.get(
        "paths", [request["path"]] if isinstance(request.get("path"), str) else None
    )
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
        raise _invalid("impact needs request.changeset, request.paths or request.path")
    changes = []
    for raw in paths:
        try:
            wanted = validate_path(raw.rstrip("/"))
        except PathError as exc:
            raise _invalid("invalid path", str(exc)[:300]) from None
        matched = [p for p in sorted(index) if p == wanted or p.startswith(wanted + "/")]
        if not matched:
            raise _invalid("path is not in the baseline", wanted[:300])
        for path in matched:
            changes.append(
                {"path": path, "kind": "modify", "before": index[path], "after": index[path]}
            )
    if len(changes) > MAX_IMPACT_PATHS:
        raise _invalid(f"impact covers at most {MAX_IMPACT_PATHS} files per request")
    return {"baseline": dict(baseline), "changes": changes}


def inspect_targets(
    ctx: HostContext, policy: EffectivePolicy, call_site: CallSite
) -> tuple[list[Target], list[str]]:
    """Pinned providers of the policy's inspect requirements, else advisory trusted inspect providers."""
    targets: list[Target] = []
    required: list[str] = []
    for role, ids in (
        ("required", policy.required_ids(call_site)),
        ("optional", policy.optional_ids(call_site)),
    ):  # type: ignore[arg-type]
        for requirement_id in ids:
            requirement = policy.requirement(requirement_id)
            if requirement is None or "inspect" not in requirement.capabilities:
                continue
            if role == "required":
                required.append(requirement_id)
            for pin in requirement.authority.providers:
                targets.append(Target(pin.id, requirement_id, role, pin, requirement_id))
    if not targets and not required:
        for provider_id, installed in sorted(ctx.providers.items()):
            if installed.manifest is not None and "inspect" in installed.manifest.capabilities:
                targets.append(Target(provider_id, f"{provider_id}/inspect", "advisory"))
    return targets, required


def _provenance(ctx: HostContext, target: Target) -> dict[str, Any]:
    installed = ctx.providers.get(target.provider_id)
    manifest = installed.manifest if installed else None
    claims = installed.conformance_claims if installed else []
    return {
        "provider": target.provider_id,
        "capability": "inspect",
        "identity": manifest.provenance.publisher if manifest else target.provider_id,
        "integrity": manifest.artifact.fingerprint if manifest else "unknown",
        "conformance": claims[0] if claims else NOT_CLAIMED,
    }


async def _run_target(
    ctx: HostContext,
    target: Target,
    request: dict[str, Any],
    params: dict[str, Any],
    scope: EvaluationScope,
    allowed: set[str],
    deadline: float,
) -> None:
    def degrade(reason: DegradationReason, detail: str, state: str | None = None) -> None:
        target.degraded.append(
            degradation(
                target.provider_id,
                reason,
                detail,
                requirement=target.requirement_id,
                capability="inspect",
                provider_state=state,
            )  # type: ignore[arg-type]
        )

    try:
        session = await ctx.supervisor.session_for(
            target.provider_id, scope.baseline, deadline - anyio.current_time(), family="inspect"
        )
    except SessionFailure as failure:
        return degrade(failure.reason, failure.detail, failure.state)
    assert isinstance(session, InspectProviderSession)
    target.provenance = _provenance(ctx, target)
    if session.requests_write:
        return degrade(
            "direct-write-risk",
            "provider requested write access at initialize; no content served",
            session.state,
        )
    method = session.method_for(request["verb"])
    if method is None:
        return degrade(
            "unsupported", f"provider does not advertise the {request['verb']} verb", session.state
        )
    async with session.lock:
        try:
            raw = await ctx.supervisor.request(
                target.provider_id,
                session,
                method,
                lambda: session.scoped_request(
                    method, params, scope, max(0.001, deadline - anyio.current_time())
                ),
                quote_error=True,
            )
        except SessionFailure as failure:
            return degrade(failure.reason, failure.detail, failure.state)
        check = check_inspect_result(
            raw,
            request["verb"],
            rev=scope.baseline["rev"],
            allowed_blobs=allowed,
            served_ever=session.served_ever,
        )
    if check.result is None:
        return degrade(
            cast(DegradationReason, check.reason or "malformed"), check.detail, session.state
        )
    target.result, target.blobs, target.truncated, target.ran = (
        check.result,
        check.blobs,
        check.truncated,
        True,
    )


def _authority(
    ctx: HostContext, target: Target, policy: EffectivePolicy, call_site: CallSite
) -> None:
    if target.pin is None or target.requirement_id is None:
        return
    pin_check, evidence = ctx.authority(target.pin, target.requirement_id, policy, call_site)
    target.evidence = evidence
    if target.provenance is not None:
        target.provenance.update(
            identity=pin_check.identity,
            integrity=pin_check.integrity,
            conformance=pin_check.conformance,
        )
    if not pin_check.granted:
        target.ran = False
        target.degraded.append(
            degradation(
                target.provider_id,
                "missing-authority",
                "policy pin does not match the trusted manifest: "
                + "; ".join(pin_check.mismatches),
                requirement=target.requirement_id,
                capability="inspect",
            )
        )


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
    call_site, request, asked, timeout_ms = parse_params(params)
    state = await anyio.to_thread.run_sync(ctx.workspace.state)
    policy = await anyio.to_thread.run_sync(ctx.policy_for, state)
    baseline, fresh = _effective_baseline(state, asked)
    with_dirty = "dirty" in baseline
    index = await anyio.to_thread.run_sync(
        lambda: ctx.workspace.snapshot_index(state, with_dirty=with_dirty)
    )
    targets, required = inspect_targets(ctx, policy, call_site)
    host_degraded: list[dict[str, Any]] = []
    if not targets:
        host_degraded.append(
            degradation(
                "inspect",
                "missing-required-provider" if required else "missing",
                "no trusted provider serves the inspect capability",
                capability="inspect",
            )
        )
    stale = (
        None
        if fresh
        else (
            f"requested baseline is neither the committed snapshot nor the current work tree (host has rev {state.rev})"
        )
    )
    provider_request = provider_params(request, baseline, index) if fresh else {}
    referenced: dict[str, set[str]] = {}
    if fresh and request["verb"] == "impact":
        blobs = await anyio.to_thread.run_sync(
            load_blobs, ctx, state, provider_request["changeset"], with_dirty
        )
        referenced = blobs.referenced
        if blobs.problems:
            stale = "changeset does not match the baseline: " + "; ".join(blobs.problems)
    if stale is not None:
        for target in targets:
            target.degraded.append(
                degradation(
                    target.provider_id,
                    "stale-baseline",
                    stale,
                    requirement=target.requirement_id,
                    capability="inspect",
                )
            )
    elif targets:
        allowed = set(index.values()) | set(referenced)

        async def load(identity: str) -> bytes | None:
            paths = sorted(referenced.get(identity, ())) or [
                p for p, b in index.items() if b == identity
            ]
            return await anyio.to_thread.run_sync(
                lambda: ctx.workspace.resolve(identity, paths, state.tree)
            )

        budget = min(policy.budget_ms(call_site), timeout_ms or 10**9)  # type: ignore[arg-type]
        deadline = anyio.current_time() + budget / 1000
        async with anyio.create_task_group() as tg:
            for target in targets:
                scope = EvaluationScope(
                    baseline=baseline, index=lambda: index, referenced=referenced, load=load
                )
                tg.start_soon(
                    _run_target, ctx, target, request, provider_request, scope, allowed, deadline
                )
    for target in targets:
        _authority(ctx, target, policy, call_site)
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
    req_digest = request_digest(METHOD, params)
    receipt = build_receipt(
        kind="inspect",
        clock=clock,
        request_digest=req_digest,
        policy_digest=policy.digest,
        baseline=baseline,
        valid_as_of=valid,
        coverage=coverage,
        assurance=assurance_block(ctx.assurance_mode),
        authority_evidence=[t.evidence for t in targets if t.evidence is not None],
        provider_ids=[t.provider_id for t in targets] + ran,
        provenance=[t.provenance for t in targets if t.provenance is not None],
        call_site=call_site,
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
