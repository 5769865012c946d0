"""MCP resources `asp://host/status` and `asp://host/capabilities`: the same labelled envelope as the
matching tools, readable by clients that attach resources to a conversation (Claude Code/Desktop,
VS Code).

The SDK gives static resources no request context, so `resource_context` (a middleware) puts the
connection's `BridgeRuntime` into a context variable for the duration of one `resources/read`; the
resource functions read it there. Results carry a short cache hint: host status changes whenever
the work tree does, so a client may reuse an answer for a few seconds only.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer

from bridge import summaries
from bridge.label import label_meta
from bridge.runtime import BridgeRuntime
from bridge.summaries import Summarizer

MIME = "application/json"
CACHE_TTL_MS = 5000
CACHE_HINT = CacheHint(ttl_ms=CACHE_TTL_MS, scope="private")
_current: ContextVar[BridgeRuntime | None] = ContextVar("asp_bridge_runtime", default=None)


@dataclass(frozen=True)
class HostResource:
    """One resource: its URI, the host method it reads and the readable summary of the answer."""

    uri: str
    name: str
    title: str
    description: str
    method: str
    summarize: Summarizer


RESOURCES = (
    HostResource(
        "asp://host/status",
        "asp-host-status",
        "ASP host status (non-authoritative)",
        "The ASP host's status (host/status) in the bridge's labelled envelope: readiness, "
        "baseline, policy, providers, gates per call-site. Never an ASP gate decision.",
        "host/status",
        summaries.status_summary,
    ),
    HostResource(
        "asp://host/capabilities",
        "asp-host-capabilities",
        "ASP host capabilities (non-authoritative)",
        "The inspect/check/edit surface the ASP host composes (host/capabilities) in the "
        "bridge's labelled envelope. Never an ASP gate decision.",
        "host/capabilities",
        summaries.capabilities_summary,
    ),
)


def resource_context() -> Any:
    """Middleware: during `resources/read`, the connection's runtime is what `_runtime()` returns."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "resources/read" or not isinstance(ctx.lifespan_context, BridgeRuntime):
            return await call_next(ctx)
        token = _current.set(ctx.lifespan_context)
        try:
            return await call_next(ctx)
        finally:
            _current.reset(token)

    return middleware


def _runtime() -> BridgeRuntime:
    state = _current.get()
    if state is None:
        raise RuntimeError("asp:// resources need the bridge lifespan (create_server)")
    return state


def _reader(spec: HostResource) -> Callable[[], Awaitable[str]]:
    async def read() -> str:
        outcome = await _runtime().forward(
            None, tool=spec.uri, method=spec.method, summarize=spec.summarize
        )
        envelope = outcome.structured_content or {}
        return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))

    read.__name__ = spec.name.replace("-", "_")
    return read


def register(server: MCPServer[Any]) -> list[str]:
    """Add the `asp://host/*` resources; each read is one host call through the forwarding path."""
    for spec in RESOURCES:
        server.resource(
            spec.uri,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            mime_type=MIME,
            meta=label_meta("mcp-tool"),
        )(_reader(spec))
    return [spec.uri for spec in RESOURCES]
