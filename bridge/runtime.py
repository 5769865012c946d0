"""The per-connection bridge state (one `HostClient`) and the single forwarding path of every tool."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult

from asp_protocol.errors import AspError, RequestTimeout
from bridge import guard, label
from bridge.config import BridgeSettings
from bridge.fence import cap_string, clean_text
from host_client import HostClient, HostProtocolError, HostUnavailable

ProgressSink = Callable[[Any], Awaitable[None]]


class BridgeRuntime:
    """What tools see through `ctx.request_context.lifespan_context`."""

    def __init__(self, settings: BridgeSettings, client: HostClient) -> None:
        self.settings = settings
        self.client = client
        self.limits = settings.text_limits()

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
    ) -> CallToolResult:
        """Guard, call the host, label the outcome. The only way an ordinary tool reaches the host."""
        started = time.perf_counter()
        refused = guard.refusal(method, params, call_site)
        if refused is not None:
            return self._failure(
                tool,
                method,
                call_site,
                started,
                label.BridgeError(reason="refused", message=refused),
            )
        try:
            result = await self.client.call(
                method,
                params,
                call_site=call_site,
                origin=tool,
                on_progress=self._progress_sink(ctx),
            )
        except AspError as exc:
            error = label.BridgeError(
                reason="host-error",
                message=exc.message,
                code=exc.code,
                failClass=exc.fail_class,
                retryable=exc.retryable,
                detail=exc.detail,
            )
        except RequestTimeout as exc:
            error = label.BridgeError(
                reason="timeout",
                message=f"the host did not answer {method} within {exc.timeout:g} s; "
                "the request was cancelled with $/cancelRequest",
            )
        except HostUnavailable as exc:
            error = label.BridgeError(
                reason="host-unavailable",
                message=exc.reason
                + (" (permanent until the bridge restarts)" if exc.permanent else ""),
                exitCode=exc.exit_code,
                stderrTail=exc.stderr_tail or None,
            )
        except HostProtocolError as exc:
            error = label.BridgeError(
                reason="host-protocol-error",
                message="the host's reply breaks the outer-seam contract",
                detail=exc.detail,
            )
        else:
            return label.success(
                tool=tool,
                method=method,
                call_site=call_site,
                host=self.host_identity(),
                latency_ms=(time.perf_counter() - started) * 1000,
                host_result=result,
                limits=self.limits,
            )
        return self._failure(tool, method, call_site, started, error)

    def bridge_state(self, tool: str, data: dict[str, Any], started: float) -> CallToolResult:
        """A labelled result for a debug tool (no host call)."""
        return label.success(
            tool=tool,
            method=None,
            call_site=None,
            host=self.host_identity(),
            latency_ms=(time.perf_counter() - started) * 1000,
            bridge_result=data,
            limits=self.limits,
        )

    def _failure(
        self, tool: str, method: str, call_site: str, started: float, error: label.BridgeError
    ) -> CallToolResult:
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
        if ctx is None:
            return None
        count = 0

        async def sink(value: Any) -> None:
            nonlocal count
            count += 1
            message = value.get("message") if isinstance(value, dict) else None
            total = value.get("total") if isinstance(value, dict) else None
            text = None
            if isinstance(message, str):
                text = "host progress (untrusted): " + cap_string(clean_text(message), 200)
            numeric_total = (
                float(total) if isinstance(total, int | float) and total >= count else None
            )
            await ctx.report_progress(count, numeric_total, text)

        return sink
