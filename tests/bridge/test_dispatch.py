"""`tools/call` through the bridge's own handler on the SDK's lowlevel server (bridge/dispatch.py),
in both protocol eras, with the real SDK `Client` and real bad-host processes; and the rule for the
SDK's OpenTelemetry middleware (bridge/telemetry.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from mcp import Client
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolRequestParams, CallToolResult
from opentelemetry import trace

from bridge import label
from bridge.config import BridgeSettings
from bridge.dispatch import ToolDispatch
from bridge.label import Envelope
from bridge.runtime import BridgeRuntime
from bridge.server import create_server
from bridge.telemetry import drop_idle_telemetry, tracing_configured
from bridge.tools import ToolSpec, runtime
from tests.support.mcp_helpers import assert_labelled, bad_host_argv

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]  # 2025-11-25 handshake, and the modern 2026-07-28 path


def _settings(tmp_path: Path, **kw: Any) -> BridgeSettings:
    values: dict[str, Any] = {"timeout": 10.0, "backoff_initial": 0.01, "backoff_max": 0.05}
    values.update(kw)
    return BridgeSettings(repo=tmp_path, host=list(bad_host_argv("ok")), **values)


async def _echo(ctx: Context, n: int = 7) -> Annotated[CallToolResult, Envelope]:
    """Answers the validated argument it was given (no host call)."""
    state: BridgeRuntime = runtime(ctx)
    return label.success(
        limits=state.limits,
        bridge_result={"n": n, "requestId": ctx.request_id},
        **state.header("asp_test_echo", None, None, 0.0),
    )


async def _tool_error(ctx: Context) -> Annotated[CallToolResult, Envelope]:
    raise ToolError("broken on purpose")


async def _crash(ctx: Context) -> Annotated[CallToolResult, Envelope]:
    raise RuntimeError("secret internals")


async def _protocol_error(ctx: Context) -> Annotated[CallToolResult, Envelope]:
    raise MCPError(-32042, "a protocol-level refusal")


async def _context_probe(ctx: Context) -> Annotated[CallToolResult, Envelope]:
    """What the tool's `Context` answers, read directly and from a copy of it."""
    state: BridgeRuntime = runtime(ctx)
    request = ctx.request_context
    copied = ctx.model_copy()
    seen = {
        "isContext": isinstance(ctx, Context),
        "requestId": str(ctx.request_id),
        "sameRequest": str(request.request_id) == ctx.request_id and request.session is ctx.session,
        "state": request.lifespan_context is state,
        "copySameRequest": copied.request_context is request,
    }
    await ctx.report_progress(1, 1, "probe")  # no progress token: a no-op, not an error
    return label.success(
        limits=state.limits, bridge_result=seen, **state.header("asp_test_context", None, None, 0.0)
    )


EXTRA = (
    ToolSpec("asp_test_context", "context", "test context", _context_probe),
    ToolSpec("asp_test_echo", "echo", "test echo", _echo),
    ToolSpec("asp_test_tool_error", "tool error", "test tool error", _tool_error),
    ToolSpec("asp_test_crash", "crash", "test crash", _crash),
    ToolSpec("asp_test_protocol_error", "protocol error", "test protocol error", _protocol_error),
)


def _server(tmp_path: Path, **kw: Any) -> MCPServer[BridgeRuntime]:
    return create_server(_settings(tmp_path), extra_tools=EXTRA, **kw)


@pytest.mark.parametrize("mode", MODES)
async def test_calls_bypass_the_mcpserver_tool_layer(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lowlevel handler is the bridge's, and a call never reaches `Tool.run`."""

    async def no_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("MCPServer's Tool.run was used")

    monkeypatch.setattr(Tool, "run", no_run)
    server = _server(tmp_path)
    entry = server._lowlevel_server.get_request_handler("tools/call")
    assert entry is not None and isinstance(entry.handler, ToolDispatch)
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        status = assert_labelled(await client.call_tool("asp_status", {}), is_error=False)
        assert status["hostResult"]["receipt"]["kind"]
        defaulted = assert_labelled(await client.call_tool("asp_test_echo", {}), is_error=False)
        assert defaulted["bridgeResult"]["n"] == 7
        coerced = assert_labelled(
            await client.call_tool("asp_test_echo", {"n": "3"}), is_error=False
        )
        assert coerced["bridgeResult"]["n"] == 3  # the same lax pydantic model as before


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_context_answers_as_the_sdks_own(tmp_path: Path, mode: str) -> None:
    """The tool's `Context` (bridge/dispatch.py reads its request context from a slot) is a
    `Context` whose request, session, request id and lifespan state are this request's, and a
    copy of it answers the same."""
    async with Client(_server(tmp_path), mode=mode) as client:  # type: ignore[arg-type]
        seen = assert_labelled(await client.call_tool("asp_test_context", {}), is_error=False)
        seen_again = assert_labelled(await client.call_tool("asp_test_context", {}), is_error=False)
    probe = seen["bridgeResult"]
    assert probe["isContext"] and probe["sameRequest"] and probe["state"]
    assert probe["copySameRequest"]
    assert probe["requestId"] != seen_again["bridgeResult"]["requestId"]


@pytest.mark.parametrize("mode", MODES)
async def test_failures_read_as_before(tmp_path: Path, mode: str) -> None:
    """Argument errors, unknown and removed tools, a ToolError, a crash: each a labelled refusal
    with MCPServer's wording; an MCPError stays a JSON-RPC error."""
    settings = _settings(tmp_path, tools=["asp_status", "asp_test_echo", "asp_test_tool_error"])
    settings_crash = _settings(tmp_path)
    async with Client(create_server(settings, extra_tools=EXTRA), mode=mode) as client:  # type: ignore[arg-type]
        bad = assert_labelled(await client.call_tool("asp_test_echo", {"n": "x"}), is_error=True)
        assert bad["error"]["reason"] == "refused"
        assert bad["error"]["message"] == (
            'asp_test_echo: argument `n` = "x" is not accepted; it takes an integer'
        )
        removed = assert_labelled(await client.call_tool("asp_debug_host", {}), is_error=True)
        assert removed["error"]["message"].startswith("unknown tool `asp_debug_host`")
        failed = assert_labelled(await client.call_tool("asp_test_tool_error", {}), is_error=True)
        assert failed["error"]["message"].startswith("the call produced no labelled result")
        assert (
            failed["error"]["detail"]
            == "Error executing tool asp_test_tool_error: broken on purpose"
        )
    async with Client(create_server(settings_crash, extra_tools=EXTRA), mode=mode) as client:  # type: ignore[arg-type]
        crashed = assert_labelled(await client.call_tool("asp_test_crash", {}), is_error=True)
        assert crashed["error"]["detail"] == "Error executing tool asp_test_crash"
        with pytest.raises(MCPError) as raised:
            await client.call_tool("asp_test_protocol_error", {})
        assert raised.value.error.code == -32042


class _Counting(Extension):
    """An extension that intercepts every tool call (MCPServer composes it around the handler)."""

    identifier = "dev.asp-mcp-bridge.test/counting"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        self.seen.append(params.name)
        return await call_next(ctx)


async def test_extension_interceptors_still_wrap_the_handler(tmp_path: Path) -> None:
    extension = _Counting()
    server = _server(tmp_path, extensions=[extension])
    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        assert_labelled(await client.call_tool("asp_test_echo", {"n": 1}), is_error=False)
    assert extension.seen == ["asp_test_echo"]


class _Recording(trace.TracerProvider):
    """A configured provider (what an OpenTelemetry SDK would install)."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return trace.NoOpTracer()


def test_telemetry_middleware_only_with_a_tracer_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def has_otel(server: MCPServer[Any]) -> bool:
        return any(
            isinstance(m, OpenTelemetryMiddleware) for m in server._lowlevel_server.middleware
        )

    assert not tracing_configured(trace.ProxyTracerProvider())
    assert not tracing_configured(trace.NoOpTracerProvider())
    assert tracing_configured(_Recording())
    assert not tracing_configured()  # nothing configured in the test process
    assert not has_otel(create_server(_settings(tmp_path)))
    monkeypatch.setattr(trace, "get_tracer_provider", _Recording)
    kept = create_server(_settings(tmp_path))
    assert has_otel(kept)
    assert not drop_idle_telemetry(kept._lowlevel_server)  # configured: left in place
    assert drop_idle_telemetry(kept._lowlevel_server, trace.NoOpTracerProvider())
    assert not has_otel(kept)
