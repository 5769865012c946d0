"""The outer-seam method table: what a harness may call on `asp-host serve`, and what it may not.

Provider methods sent here are fast paths around the host: `check/evaluate` / `judge/evaluate`
get a `deny` envelope with degraded `lattice-fast-path` (empty `ran`, no authority evidence);
`edit/propose`, `act/propose` and `sense/*` get a typed `policy` error. `host/requestEditPlan`
and `host/applyProposal` are the edit profile (`edit/`); apply is the only method that writes.
`host/queryInspect` routes to the inspect providers (`inspect/query.py`); the fast-path deny is
built in `evaluate/fast_path.py`, the private helpers live in `helpers.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from asp_protocol.errors import AspError, ErrorCode, FailClass
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext, RequestHandler
from asp_protocol.rpc_types import Prepare
from reference_host.context import HostContext
from reference_host.edit.apply import apply_proposal
from reference_host.edit.plan import request_edit_plan
from reference_host.edit.preview import proposal_preview
from reference_host.evaluate.evaluation import evaluate_changeset
from reference_host.evaluate.fast_path import fast_path_envelope
from reference_host.helpers import policy_info, put_blob, working_changeset
from reference_host.inspect.query import query_inspect
from reference_host.status.results import (
    StatusLike,
    host_authority_status,
    host_capabilities,
    host_status,
    status_like_wire,
)
from reference_host.status.snapshot import start_reading

STATUS_LIKE: dict[str, StatusLike] = {
    "host/status": host_status,
    "host/capabilities": host_capabilities,
    "host/authority/status": host_authority_status,
}
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


class _StatusStart:
    """A status-like request as it was read: its params, and its reading begun (git running)."""

    def __init__(self, ctx: HostContext, params: Any) -> None:
        self.params = _object_params(params)  # refused before git starts
        self.reading = start_reading(ctx)

    def close(self) -> None:
        self.reading.close()


def _status_like(fn: StatusLike, ctx: HostContext) -> tuple[Prepare, RequestHandler]:
    """A status-like method on the event loop (`status/snapshot.py` says when it hops), its
    `git status` started as the request is read (asp_protocol/handling.py)."""

    def prepare(params: Any) -> _StatusStart:
        return _StatusStart(ctx, params)

    async def handler(start: _StatusStart, rpc: RequestContext) -> Any:
        return await status_like_wire(fn, ctx, start.params, start.reading)

    return prepare, handler


def _refusal(code: ErrorCode, message: str, fail_class: FailClass, method: str) -> RequestHandler:
    """A handler that always answers the same typed error (detail: the method called)."""

    async def refuse(params: Any, rpc: RequestContext) -> Any:
        raise AspError(code, message, fail_class=fail_class, detail=method)

    return refuse


def build_endpoint(
    ctx: HostContext, receive: ByteReceiveStream, send: ByteSendStream
) -> JsonRpcEndpoint:
    """The host's outer-seam endpoint with every method it answers."""
    endpoint = JsonRpcEndpoint(receive, send, name="asp-host")

    def add(method: str, handler: RequestHandler) -> None:
        endpoint.register(method, handler)

    for method, fn in STATUS_LIKE.items():
        prepare, handler = _status_like(fn, ctx)
        endpoint.register(method, handler, prepare=prepare)
    add("host/workingChangeset", _threaded(working_changeset, ctx))
    add("host/putBlob", _threaded(put_blob, ctx))
    add("host/policy", _threaded(policy_info, ctx))
    add("host/proposalPreview", _threaded(proposal_preview, ctx))

    async def evaluate(params: Any, rpc: RequestContext) -> Any:
        return await evaluate_changeset(ctx, params, rpc)

    add("host/evaluateChangeset", evaluate)
    add("host/queryInspect", lambda params, rpc: query_inspect(ctx, params, rpc))
    add("host/requestEditPlan", lambda params, rpc: request_edit_plan(ctx, params, rpc))
    add("host/applyProposal", lambda params, rpc: apply_proposal(ctx, params, rpc))

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
    return endpoint
