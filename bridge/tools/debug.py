"""Debug family: how the binding itself is doing — `asp_debug_host` and `asp_debug_trace` (no host call)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from bridge.label import Envelope
from bridge.tools import ToolSpec, runtime

REDACTION = "params and results are never stored: only method, call-site, sizes, timing and outcome"
SHARED = (
    "streamable HTTP: one host serves every session, so this shows only this session's exchanges; "
    "the stderr tail and per-method latency (shared by all sessions) are withheld"
)


async def asp_debug_host(ctx: Context) -> Annotated[CallToolResult, Envelope]:
    started = time.perf_counter()
    state = runtime(ctx)
    info = state.client.debug_info()
    if state.shared:
        info = {k: v for k, v in info.items() if k not in ("stderrTail", "latency")}
        info["sessionScope"] = SHARED
    return await state.bridge_state("asp_debug_host", info, started)


async def asp_debug_trace(
    ctx: Context,
    limit: Annotated[
        int, Field(ge=1, le=1000, description="How many of the newest exchanges to show.")
    ] = 50,
) -> Annotated[CallToolResult, Envelope]:
    started = time.perf_counter()
    state = runtime(ctx)
    entries = state.client.trace.entries()
    if state.shared:
        mine = state.session_key(ctx)
        entries = [
            entry for entry in entries if entry.session is not None and entry.session == mine
        ]
    data: dict[str, Any] = {
        "capacity": state.client.trace.capacity,
        "redaction": REDACTION,
        "entries": [entry.to_dict() for entry in entries[-limit:]],
    }
    if state.shared:
        data["sessionScope"] = SHARED
    return await state.bridge_state("asp_debug_trace", data, started)


TOOLS = (
    ToolSpec(
        "asp_debug_host",
        "ASP bridge: host process",
        "Show the supervised host process: command, pid, state, uptime, restarts, last exit, "
        "stderr tail (untrusted host text) and per-method latency (count, p50, p90, max).",
        asp_debug_host,
    ),
    ToolSpec(
        "asp_debug_trace",
        "ASP bridge: recent exchanges",
        "Show the last N host exchanges: method, call-site, duration, request/response sizes, "
        "outcome and cancellations; payloads are never recorded.",
        asp_debug_trace,
    ),
)
