"""Status family: `asp_status`, `asp_capabilities`, `asp_authority_status` — one host method each."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult

from bridge import summaries
from bridge.label import Envelope
from bridge.summaries import Summarizer
from bridge.tools import ToolSpec, runtime


def host_read_tool(
    name: str, title: str, method: str, description: str, summarize: Summarizer
) -> ToolSpec:
    """A tool that forwards one parameterless read method at call-site interactive."""

    async def tool(ctx: Context) -> Annotated[CallToolResult, Envelope]:
        return await runtime(ctx).forward(ctx, tool=name, method=method, summarize=summarize)

    tool.__name__ = name
    return ToolSpec(name, title, description, tool, host_method=method)


TOOLS = (
    host_read_tool(
        "asp_status",
        "ASP host status",
        "host/status",
        "Read the ASP host's status: readiness, workspace baseline, policy source and digest, "
        "providers, gate availability per call-site, assurance modes (host/status).",
        summaries.status_summary,
    ),
    host_read_tool(
        "asp_capabilities",
        "ASP host capabilities",
        "host/capabilities",
        "Read the inspect/check/edit surface the host composes after policy, provider health and "
        "authority (host/capabilities).",
        summaries.capabilities_summary,
    ),
    host_read_tool(
        "asp_authority_status",
        "ASP authority status",
        "host/authority/status",
        "Read provider identity, integrity, conformance, isolation and authority grants, and the "
        "policy activation (host/authority/status).",
        summaries.authority_summary,
    ),
)
