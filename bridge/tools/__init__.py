"""Ordinary read-only MCP tools, one module per family, declared as `ToolSpec`s and registered centrally."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from bridge.label import tool_meta
from bridge.runtime import BridgeRuntime

#: The house prefix keeps every tool of this server apart from other servers' tools in a client
#: that loads several (and grep-able); the extension's tools share it (`asp_ext_*`).
TOOL_NAME = re.compile(r"^asp_[a-z0-9_]{1,36}$")
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
NOTICE = "NON-AUTHORITATIVE: the result cannot satisfy a blocking ASP gate."


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, text for clients, the host method it reads (if any) and its function.

    `fn` takes `ctx: Context` plus the tool's arguments and returns
    `Annotated[CallToolResult, Envelope]` so the envelope is published as the output schema.
    """

    name: str
    title: str
    description: str
    fn: Callable[..., Awaitable[CallToolResult]]
    host_method: str | None = None


def runtime(ctx: Context) -> BridgeRuntime:
    state: Any = ctx.request_context.lifespan_context
    if not isinstance(state, BridgeRuntime):
        raise RuntimeError("bridge tools need the bridge lifespan (create_server)")
    return state


def register(server: MCPServer, specs: Iterable[ToolSpec]) -> list[str]:
    """Add every spec with the read-only annotations and the label in tool `_meta`; names must be unique."""
    names: list[str] = []
    for spec in specs:
        if not TOOL_NAME.fullmatch(spec.name):
            raise ValueError(f"tool name {spec.name!r} does not match {TOOL_NAME.pattern}")
        if spec.name in names:
            raise ValueError(f"tool {spec.name!r} is declared twice")
        names.append(spec.name)
        server.add_tool(
            spec.fn,
            name=spec.name,
            title=spec.title,
            description=f"{spec.description} {NOTICE}",
            annotations=READ_ONLY,
            meta=tool_meta("mcp-tool", spec.host_method),
        )
    return names
