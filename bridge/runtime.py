"""The per-connection bridge state (one `HostClient`, its adapter-policy gate) and tool labelling."""

from __future__ import annotations

import secrets
import time
import weakref
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult

from bridge import label, summaries
from bridge.adapter_policy import AdapterPolicyGate
from bridge.calls import Outcome, call_host
from bridge.config import BridgeSettings
from bridge.fence import fence
from bridge.label import Binding
from bridge.listing import Listing
from bridge.summaries import Summarizer
from host_client import HostClient


class BridgeRuntime:
    """What tools see through `ctx.request_context.lifespan_context`."""

    def __init__(self, settings: BridgeSettings, client: HostClient) -> None:
        self.settings = settings
        self.client = client
        self.limits = settings.text_limits()
        self.policy = AdapterPolicyGate()  # the repository's adapters.mcp, for tools and extension
        self._sessions: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.listing = Listing(self.policy)  # which tools tools/list shows (bridge/listing.py)

    @property
    def shared(self) -> bool:
        """Streamable HTTP: one host serves every session, so debug views are per session."""
        return self.settings.transport == "streamable-http"

    def session_key(self, ctx: Context | None) -> str | None:
        """Which MCP session *ctx* belongs to: over HTTP the transport's session id (unguessable,
        and the transport only routes a request carrying it to that session), else an opaque id
        per session object."""
        headers = getattr(ctx, "headers", None) if ctx is not None else None
        if headers is not None and headers.get("mcp-session-id"):
            return "http:" + str(headers.get("mcp-session-id"))
        session = getattr(getattr(ctx, "request_context", None), "session", None)
        if session is None:
            return None
        key = self._sessions.get(session)
        if key is None:
            key = self._sessions[session] = secrets.token_hex(8)
        return key

    def header(
        self, tool: str, method: str | None, call_site: str | None, started: float
    ) -> label.Header:
        """A result header stamped with this host's identity and the time since *started*."""
        latency_ms = (time.perf_counter() - started) * 1000
        return label.Header(
            tool=tool,
            method=method,
            call_site=call_site,
            host=self.host_identity(),
            latency_ms=latency_ms,
        )

    def outcome_header(self, tool: str, outcome: Outcome) -> label.Header:
        """The header of the result labelling *outcome* (its method, call-site and latency)."""
        return label.Header(
            tool=tool,
            method=outcome.method,
            call_site=outcome.call_site,
            host=self.host_identity(),
            latency_ms=outcome.latency_ms,
        )

    def host_identity(self) -> dict[str, Any]:
        """Configured command plus what the host said about itself (name/version) — for labels."""
        info: dict[str, Any] = {"command": list(self.client.settings.argv)}
        pid = self.client.pid
        if pid is not None:
            info["pid"] = pid
        info.update(self.client.identity)
        return info

    async def forward(
        self,
        ctx: Context | None,
        *,
        tool: str,
        method: str,
        params: Any = None,
        call_site: str = "interactive",
        summarize: Summarizer | None = None,
    ) -> CallToolResult:
        """One host call for an ordinary tool through `calls.call_host`, labelled once.

        *summarize* renders a few readable lines of the result; they are fenced as host data.
        """
        outcome = await self.call(ctx, tool=tool, method=method, params=params, call_site=call_site)
        if outcome.result is None:
            return self.answer(tool, outcome)
        summary = self._summary(summarize, method, outcome.result)
        return self.answer(
            tool, outcome, summary=summary, next_step=summaries.next_step(method, outcome.result)
        )

    async def call(
        self,
        ctx: Context | None,
        *,
        tool: str,
        method: str,
        params: Any = None,
        call_site: str | None = "interactive",
    ) -> Outcome:
        """The unlabelled outcome of one guarded host call, for tools that label a composed result."""
        report = ctx.report_progress if ctx is not None else None
        return await call_host(
            self.client,
            self.policy,
            method,
            params,
            call_site=call_site,
            origin=tool,
            report=report,
            session=self.session_key(ctx) if self.shared else None,  # only HTTP filters by it
            listing=self.listing,
            timeout=self.settings.timeout,
        )

    def answer(
        self,
        tool: str,
        outcome: Outcome,
        *,
        summary: str | None = None,
        binding: Binding = "mcp-tool",
        next_step: str | None = None,
        bridge_result: dict[str, Any] | None = None,
    ) -> CallToolResult:
        """Label *outcome* as a tool result (the one labelling step of a plain forwarded call);
        *bridge_result* is the bridge's own reading of a host result, carried beside it."""
        header = self.outcome_header(tool, outcome)
        if outcome.result is None:
            assert outcome.error is not None
            return label.failure(error=outcome.error, limits=self.limits, binding=binding, **header)
        return label.success(
            limits=self.limits,
            binding=binding,
            host_result=outcome.result,
            bridge_result=bridge_result,
            summary=summary,
            next_step=next_step,
            **header,
        )

    def _summary(
        self, summarize: Summarizer | None, method: str, result: dict[str, Any]
    ) -> str | None:
        """The bridge's summary, said to be the bridge's, with the host values it quotes fenced."""
        if summarize is None:
            return None
        try:
            text = summarize(result)
        except Exception:  # a summary is a convenience; the verbatim result is what counts
            return None
        values = fence(text, label="HOST VALUES", total_limit=self.limits.total_chars)
        return f"{summaries.summary_title(method)}\n{values}"

    async def bridge_state(self, tool: str, data: dict[str, Any], started: float) -> CallToolResult:
        """A labelled result for a debug tool (no host call). `adapters.mcp.enabled: false` refuses
        it too; a host that is not running is never started just to read its policy."""
        if self.client.state == "running":
            by_policy = await self.policy.check(self.client, "read")
        else:
            by_policy = self.policy.cached_refusal("read")
        if by_policy is not None:
            return self.failure(tool, None, None, started, policy_refusal(by_policy))
        return label.success(
            limits=self.limits, bridge_result=data, **self.header(tool, None, None, started)
        )

    def failure(
        self,
        tool: str,
        method: str | None,
        call_site: str | None,
        started: float,
        error: label.BridgeError,
    ) -> CallToolResult:
        """A labelled isError result stamped with this host's identity and the elapsed time."""
        return label.failure(
            error=error, limits=self.limits, **self.header(tool, method, call_site, started)
        )


def policy_refusal(reason: str) -> label.BridgeError:
    """The labelled error for a call the repository's `adapters.mcp` policy refuses."""
    return label.BridgeError(reason="refused", message=reason, fail_class="policy")
