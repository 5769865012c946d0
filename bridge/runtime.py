"""The per-connection bridge state (one `HostClient`) and the single forwarding path of every tool."""

from __future__ import annotations

import time
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult

from bridge import guard, label
from bridge.adapter_policy import AdapterPolicyGate, surface_of
from bridge.config import BridgeSettings
from bridge.fence import fence
from bridge.host_outcome import HOST_FAILURES, ProgressSink, bridge_error, progress_sink
from bridge.summaries import Summarizer
from host_client import HostClient


class BridgeRuntime:
    """What tools see through `ctx.request_context.lifespan_context`."""

    def __init__(self, settings: BridgeSettings, client: HostClient) -> None:
        self.settings = settings
        self.client = client
        self.limits = settings.text_limits()
        self.policy = AdapterPolicyGate()  # the repository's adapters.mcp, for tools and extension

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
        """Guard, honour the adapter policy, call the host, label the outcome. The only way an
        ordinary tool reaches the host.

        *summarize* renders a few readable lines of the result; they are fenced as host data.
        """
        started = time.perf_counter()
        refused = guard.refusal(method, params, call_site)
        if refused is not None:
            return self.failure(
                tool,
                method,
                call_site,
                started,
                label.BridgeError(reason="refused", message=refused),
            )
        by_policy = await self.policy.check(self.client, surface_of(method))
        if by_policy is not None:
            return self.failure(tool, method, call_site, started, policy_refusal(by_policy))
        try:
            result = await self.client.call(
                method,
                params,
                call_site=call_site,
                origin=tool,
                on_progress=self._progress_sink(ctx),
            )
        except HOST_FAILURES as exc:
            error = bridge_error(exc, method)
        else:
            self.policy.observe(result)
            return label.success(
                tool=tool,
                method=method,
                call_site=call_site,
                host=self.host_identity(),
                latency_ms=(time.perf_counter() - started) * 1000,
                host_result=result,
                limits=self.limits,
                summary=self._summary(summarize, result),
            )
        return self.failure(tool, method, call_site, started, error)

    def _summary(self, summarize: Summarizer | None, result: dict[str, Any]) -> str | None:
        if summarize is None:
            return None
        try:
            text = summarize(result)
        except Exception:  # a summary is a convenience; the verbatim result is what counts
            return None
        return fence(text, label="HOST SUMMARY", total_limit=self.limits.total_chars)

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
            tool=tool,
            method=None,
            call_site=None,
            host=self.host_identity(),
            latency_ms=(time.perf_counter() - started) * 1000,
            bridge_result=data,
            limits=self.limits,
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
            tool=tool,
            method=method,
            call_site=call_site,
            host=self.host_identity(),
            latency_ms=(time.perf_counter() - started) * 1000,
            error=error,
            limits=self.limits,
        )

    def _progress_sink(self, ctx: Context | None) -> ProgressSink | None:
        """Host `$/progress` → MCP `notifications/progress` (a no-op without a client progress token)."""
        return progress_sink(ctx.report_progress if ctx is not None else None)


def policy_refusal(reason: str) -> label.BridgeError:
    """The labelled error for a call the repository's `adapters.mcp` policy refuses."""
    return label.BridgeError(reason="refused", message=reason, failClass="policy")
