"""Debug family: how the binding itself is doing — `asp_debug_host` and `asp_debug_trace` (no host call)."""

from __future__ import annotations

import time
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from bridge.label import Envelope
from bridge.tools import ToolSpec, runtime

REDACTION = "params and results are never stored: only method, call-site, sizes, timing and outcome"


async def asp_debug_host(ctx: Context) -> Annotated[CallToolResult, Envelope]:
    started = time.perf_counter()
    state = runtime(ctx)
    return await state.bridge_state("asp_debug_host", state.client.debug_info(), started)


async def asp_debug_trace(
    ctx: Context,
    limit: Annotated[
        int, Field(ge=1, le=1000, description="How many of the newest exchanges to show.")
    ] = 50,
) -> Annotated[CallToolResult, Envelope]:
    started = time.perf_counter()
    state = runtime(ctx)
    entries = [entry.to_dict() for entry in state.client.trace.entries(limit)]
    data = {"capacity": state.client.trace.capacity, "redaction": REDACTION, "entries": entries}
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
