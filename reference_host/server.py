"""The outer-seam method table: what a harness may call on `asp-host serve`, and what it may not.

Provider methods sent here are fast paths around the host: `check/evaluate` / `judge/evaluate`
get a `deny` envelope with degraded `lattice-fast-path` (empty `ran`, no authority evidence);
`edit/propose`, `act/propose` and `sense/*` get a typed `policy` error. Edit and apply are not
built: `host/requestEditPlan` / `host/applyProposal` answer a typed `contract` error.
`host/queryInspect` routes to the inspect providers (`inspect_query.py`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from asp_protocol.canonical import changeset_digest, request_digest
from asp_protocol.changesets import PathError, validate_path
from asp_protocol.errors import AspError, ErrorCode, FailClass
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext, RequestHandler
from asp_protocol.models import CallSite
from reference_host.context import HostContext
from reference_host.decision import degradation
from reference_host.evaluation import evaluate_changeset
from reference_host.inspect_query import query_inspect
from reference_host.policy import CALL_SITES
from reference_host.receipts import Clock, assurance_block, build_receipt
from reference_host.status import host_authority_status, host_capabilities, host_status

FAST_PATH_CHECK = ("check/evaluate", "judge/evaluate")
FAST_PATH_REFUSED = (
    "edit/propose",
    "act/propose",
    "sense/references",
    "sense/callers",
    "sense/callees",
    "sense/symbols",
    "sense/impact",
    "sense/query",
    "inspect/references",
)
UNBUILT = ("host/requestEditPlan", "host/applyProposal")
MAX_UPLOAD_BYTES = 16 * 1024 * 1024


def _object_params(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise AspError(ErrorCode.INVALID_PARAMS, "params must be an object")
    return params


def _threaded(fn: Callable[[HostContext, Any], dict[str, Any]], ctx: HostContext) -> RequestHandler:
    async def handler(params: Any, rpc: RequestContext) -> Any:
        return await anyio.to_thread.run_sync(fn, ctx, _object_params(params))

    return handler


def _refusal(code: ErrorCode, message: str, fail_class: FailClass, method: str) -> RequestHandler:
    """A handler that always answers the same typed error (detail: the method called)."""

    async def refuse(params: Any, rpc: RequestContext) -> Any:
        raise AspError(code, message, fail_class=fail_class, detail=method)

    return refuse


def fast_path_envelope(ctx: HostContext, method: str, params: Any) -> dict[str, Any]:
    """The deny a harness gets for calling a provider method on the host (CORE-NO-LATTICE-FAST-PATH)."""
    clock = Clock()
    state = ctx.workspace.state()
    policy = ctx.policy_for(state)
    site = params.get("callSite") if isinstance(params, dict) else None
    call_site: CallSite = site if site in CALL_SITES else "gate"
    required = policy.required_ids(call_site)
    detail = (
        f"harness called provider method {method} on the host instead of host/evaluateChangeset"
    )
    degraded = [
        degradation(method, "lattice-fast-path", detail, requirement=r) for r in required
    ] or [degradation(method, "lattice-fast-path", detail)]
    coverage = {
        "exhaustive": False,
        "required": required,
        "enrolled": required,
        "ran": [],
        "degraded": degraded,
    }
    changeset = params.get("changeset") if isinstance(params, dict) else None
    cs_digest = changeset_digest(changeset) if isinstance(changeset, dict) else None
    baseline = state.baseline()
    req_digest = request_digest(method, params)
    assurance = assurance_block(ctx.assurance_mode)
    envelope: dict[str, Any] = {
        "pass": False,
        "decision": "deny",
        "callSite": call_site,
        "requestDigest": req_digest,
        "findings": [],
        "coverage": coverage,
        "policyDigest": policy.digest,
        "authorityEvidence": [],
        "validAsOf": {"rev": baseline["rev"]},
        "assurance": assurance,
    }
    if cs_digest is not None:
        envelope["changesetDigest"] = cs_digest
    envelope["receipt"] = build_receipt(
        kind="evaluate",
        clock=clock,
        request_digest=req_digest,
        policy_digest=policy.digest,
        baseline=baseline,
        valid_as_of={"rev": baseline["rev"]},
        coverage=coverage,
        assurance=assurance,
        call_site=call_site,
        changeset_digest=cs_digest,
    )
    return envelope


def _helper_receipt(ctx: HostContext, method: str, params: Any, clock: Clock) -> dict[str, Any]:
    state = ctx.workspace.state()
    policy = ctx.policy_for(state)
    baseline = state.baseline()
    return build_receipt(
        kind="status",
        clock=clock,
        request_digest=request_digest(method, params),
        policy_digest=policy.digest,
        baseline=baseline,
        valid_as_of={"rev": baseline["rev"]},
        coverage={"exhaustive": False, "required": [], "enrolled": [], "ran": [], "degraded": []},
        assurance=assurance_block(ctx.assurance_mode),
    )


def working_changeset(ctx: HostContext, params: dict[str, Any]) -> dict[str, Any]:
    """Private helper: the work tree's changes against HEAD, with the `{rev}` baseline."""
    clock = Clock()
    paths = params.get("paths")
    if paths is not None:
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise AspError(ErrorCode.INVALID_PARAMS, "paths must be an array of strings")
        try:
            paths = [validate_path(p.rstrip("/")) for p in paths]
        except PathError as exc:
            raise AspError(
                ErrorCode.INVALID_PARAMS, "invalid path", detail=str(exc)[:300]
            ) from None
    workspace = ctx.workspace
    state = workspace.state()
    baseline = {"rev": state.rev}
    changes = []
    wanted = sorted(state.differing)
    if paths is not None:
        wanted = [w for w in wanted if any(w == p or w.startswith(p + "/") for p in paths)]
    head_ids = workspace.blob_ids_of([state.head_sha1[p] for p in wanted if p in state.head_sha1])
    for path in wanted:
        after = state.differing[path]
        before = head_ids.get(state.head_sha1[path]) if path in state.head_sha1 else None
        if before is None and after is not None:
            changes.append({"path": path, "kind": "create", "after": after})
        elif after is None and before is not None:
            changes.append({"path": path, "kind": "delete", "before": before})
        elif before is not None and after is not None:
            changes.append({"path": path, "kind": "modify", "before": before, "after": after})
    return {
        "baseline": baseline,
        "changeset": {"baseline": dict(baseline), "changes": changes},
        "receipt": _helper_receipt(ctx, "host/workingChangeset", params, clock),
    }


def put_blob(ctx: HostContext, params: dict[str, Any]) -> dict[str, Any]:
    """Private helper: keep uploaded candidate content in host memory and return its blob id."""
    clock = Clock()
    data = params.get("bytes")
    encoding = params.get("encoding", "utf-8")
    if not isinstance(data, str) or encoding not in ("utf-8", "base64"):
        raise AspError(
            ErrorCode.INVALID_PARAMS, "putBlob needs string bytes and encoding utf-8 or base64"
        )
    try:
        raw = data.encode("utf-8") if encoding == "utf-8" else base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise AspError(
            ErrorCode.INVALID_PARAMS, "bytes do not decode with the given encoding"
        ) from None
    if len(raw) > MAX_UPLOAD_BYTES:
        raise AspError(ErrorCode.INVALID_PARAMS, "blob too large")
    identity = ctx.workspace.put_blob(raw)
    return {
        "blobId": identity,
        "receipt": _helper_receipt(ctx, "host/putBlob", {"encoding": encoding}, clock),
    }


def policy_info(ctx: HostContext, params: dict[str, Any]) -> dict[str, Any]:
    """Private helper: the effective policy object, its source, digest and activation."""
    state = ctx.workspace.state()
    policy = ctx.policy_for(state)
    result: dict[str, Any] = {
        "policy": policy.document,
        "source": policy.source,
        "policyDigest": policy.digest,
        "activation": policy.activation,
    }
    if policy.error:
        result["detail"] = policy.error
    return result


def build_endpoint(
    ctx: HostContext, receive: ByteReceiveStream, send: ByteSendStream
) -> JsonRpcEndpoint:
    """The host's outer-seam endpoint with every method it answers."""
    endpoint = JsonRpcEndpoint(receive, send, name="asp-host")

    def add(method: str, handler: RequestHandler) -> None:
        endpoint.register(method, handler)

    add("host/status", _threaded(host_status, ctx))
    add("host/capabilities", _threaded(host_capabilities, ctx))
    add("host/authority/status", _threaded(host_authority_status, ctx))
    add("host/workingChangeset", _threaded(working_changeset, ctx))
    add("host/putBlob", _threaded(put_blob, ctx))
    add("host/policy", _threaded(policy_info, ctx))

    async def evaluate(params: Any, rpc: RequestContext) -> Any:
        return await evaluate_changeset(ctx, params, rpc)

    add("host/evaluateChangeset", evaluate)
    add("host/queryInspect", lambda params, rpc: query_inspect(ctx, params, rpc))

    for method in FAST_PATH_CHECK:

        async def fast_path(params: Any, rpc: RequestContext, method: str = method) -> Any:
            return await anyio.to_thread.run_sync(fast_path_envelope, ctx, method, params)

        add(method, fast_path)
    for method in FAST_PATH_REFUSED:
        add(
            method,
            _refusal(
                ErrorCode.SCOPE_DENIED,
                "provider methods are not offered on the host's outer seam",
                "policy",
                method,
            ),
        )
    for method in UNBUILT:
        add(
            method,
            _refusal(
                ErrorCode.METHOD_NOT_FOUND,
                "this profile is not built in the reference host",
                "contract",
                method,
            ),
        )
    return endpoint
