"""The bridge with its ASP outer-seam extension for the extension tests: the server built the way
`bridge serve` builds it, a bake-off case prepared with one fake provider behaviour, the raw
custom-request sender, and the one way a test cancels an evaluate the provider never answers."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from pydantic import TypeAdapter

from bridge.config import BridgeSettings
from bridge.ext.bakeoff import cases, plan
from bridge.ext.bakeoff.mcp_runner import ExtRequest
from bridge.ext.bakeoff.spec import ProviderSpec
from bridge.ext.bakeoff.workspace import PreparedCase, prepare
from bridge.ext.extension import AspOuterSeamExtension, build
from bridge.runtime import BridgeRuntime
from bridge.server import create_server

RAW = TypeAdapter(dict[str, Any])  # the extension's envelope as sent, no MCP result model between


def extension_server(
    settings: BridgeSettings,
) -> tuple[MCPServer[BridgeRuntime], AspOuterSeamExtension]:
    """The bridge with the extension advertised and mounted, and the extension (for its records)."""
    extension, middleware = build()
    server = create_server(settings, extensions=[extension], middleware=middleware)
    return server, extension


def case_settings(prepared: PreparedCase, timeout: float = 30) -> BridgeSettings:
    """Settings that run the reference host on a prepared bake-off case, as the bake-off does."""
    argv = plan.host_argv(plan.DEFAULT_HOST, prepared, keep_repo_placeholder=True)
    return BridgeSettings(repo=prepared.repo, host=argv, timeout=timeout)


def prepared_case(
    tmp_path: Path, behavior: str = "clean", *extra_args: str, name: str = "allow"
) -> PreparedCase:
    """Bake-off case *name* in *tmp_path* with its one provider replaced by *behavior*."""
    case = cases.select([name])[0]
    provider = ProviderSpec(id=case.providers[0].id, behavior=behavior, extra_args=extra_args)
    return prepare(
        dataclasses.replace(case, providers=(provider,)), tmp_path, python=sys.executable
    )


async def send(client: Client, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
    """One custom `asp/*` request, its result as the raw JSON object."""
    return await client.session.send_request(ExtRequest(method=method, params=params), RAW, **kw)


async def cancel_an_evaluate(client: Client, prepared: PreparedCase) -> None:
    """Start the case's evaluate against a hanging provider and give up on it after one second."""
    await send(client, "asp/host/status")
    with anyio.move_on_after(1.0) as scope:
        await send(client, "asp/host/evaluateChangeset", plan.evaluate_params(prepared))
    assert scope.cancelled_caught
