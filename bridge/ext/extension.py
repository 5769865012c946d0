"""The namespaced experimental MCP extension `dev.asp-mcp-bridge/asp-outer-seam` (docs/architecture.md#bridge-decisions).

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
from bridge.adapter_policy import Surface
from bridge.calls import CancellationLog, Guarding, Outcome, call_host, refused
from bridge.ext import EXTENSION_ID, EXTENSION_VERSION, tools
from bridge.fence import cap_string, clean_text
from bridge.host_outcome import ReportProgress
from bridge.middleware import Scoped, scoped
from bridge.runtime import BridgeRuntime

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
ADVERTISED_ON = frozenset({"initialize", "server/discover"})
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

    async def call(
        self,
        runtime: BridgeRuntime,
        method: str,
        params: Any,
        *,
        call_site: str | None,
        origin: str,
        report: ReportProgress | None,
        guarding: Guarding = "tool",
        surface: Surface | None = None,
        mcp_request_id: Any = None,
    ) -> Outcome:
        """One host call through `calls.call_host`: the host is started first (a dead host is
        reported as such), cancellations are recorded in this extension's log."""
        return await call_host(
            runtime.client,
            runtime.policy,
            method,
            params,
            call_site=call_site,
            origin=origin,
            guarding=guarding,
            surface=surface,
            start_host=True,
            report=report,
            cancellations=self.cancellations,
            mcp_request_id=mcp_request_id,
            listing=runtime.listing,
            timeout=runtime.settings.timeout,
        )

    # -- custom methods -----------------------------------------------------------------------

    def _method_handler(self, name: str) -> Any:
        host_method = FORWARDED[name]

        async def handler(ctx: ServerRequestContext[Any, Any], _params: Any) -> HandlerResult:
            runtime = runtime_of(ctx)
            if runtime is None:
                raise MCPError(-32603, "the extension needs the bridge lifespan (create_server)")
            params = raw_params(ctx)
            call_site = _call_site(params)
            outcome = await self.call(
                runtime,
                host_method,
                params,
                call_site=call_site,
                origin=f"{name}#{ctx.request_id}",
                report=ctx.session.report_progress,
                guarding="extension-method",
                mcp_request_id=ctx.request_id,
            )
            return method_answer(runtime, name, outcome)

        return handler

    async def _refuse_apply(
        self, ctx: ServerRequestContext[Any, Any], _params: Any
    ) -> HandlerResult:
        runtime = runtime_of(ctx)
        params = raw_params(ctx)
        started = time.perf_counter()
        log.info("refused %s (never forwarded)", APPLY_METHOD)
        outcome = refused("host/applyProposal", _call_site(params), APPLY_REFUSAL, started)
        if runtime is None:
            raise MCPError(outcome.code, APPLY_REFUSAL)
        return method_answer(runtime, APPLY_METHOD, outcome)


def method_answer(runtime: BridgeRuntime, name: str, outcome: Outcome) -> dict[str, Any]:
    """The envelope a custom method returns, or an MCPError carrying the labelled error envelope.

    Labelled once, here: a method answer has no text content, only the envelope and `_meta`.
    """
    error = outcome.error
    if outcome.result is not None:
        error = label.oversize(outcome.result, None, runtime.limits)
    if error is not None:
        error = label.capped_error(error, runtime.limits)
    envelope = label.envelope(
        "mcp-extension",
        runtime.outcome_header(name, outcome),
        host_result=outcome.result if error is None else None,
        error=error,
    )
    if error is not None:
        message = cap_string(clean_text(error.message), 300)
        code = outcome.code or -32603
        raise MCPError(code, f"{error.reason}: {message}", data=envelope)
    envelope["_meta"] = label.label_meta("mcp-extension")
    return envelope


def advertise_middleware(settings: dict[str, Any] | None = None) -> Any:
    """Middleware that puts the extension under both `extensions` and `experimental` of the
    `initialize` and `server/discover` results (the SDK drops `extensions` on the legacy wire)."""
    advertised = settings or settings_object()

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in ADVERTISED_ON:  # every other request passes straight through
            return await call_next(ctx)
        result = await call_next(ctx)
        if isinstance(result, dict):
            caps = result.setdefault("capabilities", {})
            if isinstance(caps, dict):
                caps.setdefault("experimental", {})[EXTENSION_ID] = dict(advertised)
                caps.setdefault("extensions", {})[EXTENSION_ID] = dict(advertised)
        return result

    return middleware


def build() -> tuple[AspOuterSeamExtension, list[Scoped]]:
    """The extension and the middleware `create_server` needs to advertise it."""
    return AspOuterSeamExtension(), [scoped(ADVERTISED_ON, advertise_middleware())]
