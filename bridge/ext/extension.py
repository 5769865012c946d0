"""The namespaced experimental MCP extension `dev.asp-mcp-bridge/asp-outer-seam` (DESIGN §5).

Custom methods `asp/host/*` forward their params to the host unchanged — call-site included,
`gate` included — and answer the label envelope (binding `mcp-extension`, verbatim `hostResult`,
`gateSatisfied: false`). `asp/host/applyProposal` is refused, never forwarded. Two tools serve
clients that cannot send custom methods. The repository policy's `adapters.mcp` is honoured for
every extension method and tool through the connection's gate (`BridgeRuntime.policy`, which the
ordinary tools use too).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Extension, MethodBinding, ToolBinding
from mcp.shared.exceptions import MCPError
from mcp.types import RequestParams
from pydantic import ConfigDict

from asp_protocol.vocabulary import CALL_SITES
from bridge import label
from bridge.adapter_policy import Surface, surface_of
from bridge.ext import EXTENSION_ID, EXTENSION_VERSION, tools
from bridge.ext.forward import (
    UNAVAILABLE_CODE,
    CancellationLog,
    Forwarded,
    forward,
    refused,
)
from bridge.fence import cap_string, clean_text
from bridge.host_outcome import ReportProgress
from bridge.runtime import BridgeRuntime
from host_client import HostUnavailable

log = logging.getLogger(__name__)

# Custom method -> host method (its adapter-policy surface is `surface_of(host method)`).
FORWARDED: dict[str, str] = {
    "asp/host/status": "host/status",
    "asp/host/capabilities": "host/capabilities",
    "asp/host/authority/status": "host/authority/status",
    "asp/host/queryInspect": "host/queryInspect",
    "asp/host/evaluateChangeset": "host/evaluateChangeset",
    "asp/host/requestEditPlan": "host/requestEditPlan",
}
APPLY_METHOD = "asp/host/applyProposal"
APPLY_REFUSAL = (
    "asp/host/applyProposal is refused and never forwarded: mediated apply is unavailable over "
    "the non-authoritative mcp-extension binding (ADR 0025). Apply through a harness that speaks "
    "the host's native binding."
)
TOOL_NAMES = ("asp_ext_evaluate_changeset", "asp_ext_request_edit_plan")


class ForwardedParams(RequestParams):
    """Accept any params: they are forwarded verbatim (taken from the raw request, `_meta` aside)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


def settings_object() -> dict[str, Any]:
    """What the extension advertises under both `extensions` and `experimental`."""
    return {
        "version": EXTENSION_VERSION,
        "authoritative": False,
        "gateEligible": False,
        "binding": "mcp-extension",
        "methods": [*FORWARDED, APPLY_METHOD],
        "refusedMethods": [APPLY_METHOD],
        "tools": list(TOOL_NAMES),
    }


def raw_params(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The client's params minus MCP's own `_meta` (progress token, protocol stamps)."""
    params = ctx.params
    if params is None:
        return None
    stripped = {k: v for k, v in dict(params).items() if k != "_meta"}
    if not stripped and "_meta" in params:
        return None
    return stripped


def _call_site(params: Any) -> str | None:
    value = params.get("callSite") if isinstance(params, dict) else None
    return value if value in CALL_SITES else None


def runtime_of(ctx: Any) -> BridgeRuntime | None:
    state = getattr(ctx, "lifespan_context", None)
    return state if isinstance(state, BridgeRuntime) else None


class AspOuterSeamExtension(Extension):
    """`dev.asp-mcp-bridge/asp-outer-seam`: a private, non-authoritative outer-seam experiment."""

    identifier = EXTENSION_ID

    def __init__(self) -> None:
        self.cancellations = CancellationLog()

    def settings(self) -> dict[str, Any]:
        return settings_object()

    def methods(self) -> Sequence[MethodBinding]:
        bindings = [
            MethodBinding(name, ForwardedParams, self._method_handler(name)) for name in FORWARDED
        ]
        bindings.append(MethodBinding(APPLY_METHOD, ForwardedParams, self._refuse_apply))
        return bindings

    def tools(self) -> Sequence[ToolBinding]:
        return tools.bindings(self)

    # -- shared plumbing (also used by the tools) ---------------------------------------------

    async def admit(self, runtime: BridgeRuntime, surface: Surface) -> Forwarded | None:
        """Start the host if needed and apply the adapter policy; a Forwarded error refuses."""
        started = time.perf_counter()
        client = runtime.client
        if client.state != "running":
            try:
                await client.start()
            except HostUnavailable as exc:
                error = label.BridgeError(
                    reason="host-unavailable",
                    message=exc.reason,
                    failClass="health",
                    exitCode=exc.exit_code,
                    stderrTail=exc.stderr_tail or None,
                )
                return Forwarded(
                    (time.perf_counter() - started) * 1000, error=error, code=UNAVAILABLE_CODE
                )
        reason = await runtime.policy.check(client, surface)
        return refused(reason, started) if reason else None

    async def call(
        self,
        runtime: BridgeRuntime,
        method: str,
        params: Any,
        *,
        call_site: str | None,
        origin: str,
        report: ReportProgress | None,
        mcp_request_id: Any = None,
    ) -> Forwarded:
        outcome = await forward(
            runtime.client,
            method,
            params,
            call_site=call_site,
            origin=origin,
            report=report,
            cancellations=self.cancellations,
            mcp_request_id=mcp_request_id,
        )
        if outcome.result is not None:
            runtime.policy.observe(outcome.result)
        return outcome

    # -- custom methods -----------------------------------------------------------------------

    def _method_handler(self, name: str) -> Any:
        host_method = FORWARDED[name]
        surface = surface_of(host_method)

        async def handler(ctx: ServerRequestContext[Any, Any], _params: Any) -> HandlerResult:
            runtime = runtime_of(ctx)
            if runtime is None:
                raise MCPError(-32603, "the extension needs the bridge lifespan (create_server)")
            params = raw_params(ctx)
            call_site = _call_site(params)
            outcome = await self.admit(runtime, surface)
            if outcome is None:
                outcome = await self.call(
                    runtime,
                    host_method,
                    params,
                    call_site=call_site,
                    origin=f"{name}#{ctx.request_id}",
                    report=ctx.session.report_progress,
                    mcp_request_id=ctx.request_id,
                )
            return method_answer(runtime, name, host_method, call_site, outcome)

        return handler

    async def _refuse_apply(
        self, ctx: ServerRequestContext[Any, Any], _params: Any
    ) -> HandlerResult:
        runtime = runtime_of(ctx)
        params = raw_params(ctx)
        started = time.perf_counter()
        log.info("refused %s (never forwarded)", APPLY_METHOD)
        outcome = refused(APPLY_REFUSAL, started)
        if runtime is None:
            raise MCPError(outcome.code, APPLY_REFUSAL)
        return method_answer(
            runtime, APPLY_METHOD, "host/applyProposal", _call_site(params), outcome
        )


def method_answer(
    runtime: BridgeRuntime,
    name: str,
    host_method: str,
    call_site: str | None,
    outcome: Forwarded,
) -> dict[str, Any]:
    """The envelope a custom method returns, or an MCPError carrying the labelled error envelope."""
    common = {
        "tool": name,
        "method": host_method,
        "call_site": call_site,
        "host": runtime.host_identity(),
        "latency_ms": outcome.latency_ms,
        "limits": runtime.limits,
        "binding": "mcp-extension",
    }
    if outcome.result is not None:
        built = label.success(host_result=outcome.result, **common)  # type: ignore[arg-type]
    else:
        assert outcome.error is not None
        built = label.failure(error=outcome.error, **common)  # type: ignore[arg-type]
    envelope = dict(built.structured_content or {})
    if built.is_error:
        error = envelope.get("error") or {}
        message = cap_string(clean_text(str(error.get("message", "error"))), 300)
        code = outcome.code or -32603
        raise MCPError(code, f"{error.get('reason', 'error')}: {message}", data=envelope)
    envelope["_meta"] = built.meta
    return envelope


def advertise_middleware(settings: dict[str, Any] | None = None) -> Any:
    """Middleware that puts the extension under both `extensions` and `experimental` of the
    `initialize` and `server/discover` results (the SDK drops `extensions` on the legacy wire)."""
    advertised = settings or settings_object()

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
            caps = result.setdefault("capabilities", {})
            if isinstance(caps, dict):
                caps.setdefault("experimental", {})[EXTENSION_ID] = dict(advertised)
                caps.setdefault("extensions", {})[EXTENSION_ID] = dict(advertised)
        return result

    return middleware


def build() -> tuple[AspOuterSeamExtension, list[Any]]:
    """The extension and the middleware `create_server` needs to advertise it."""
    return AspOuterSeamExtension(), [advertise_middleware()]
