"""`asp-mcp-bridge serve`: run the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

import anyio

from bridge.commands.common import add_common, check_repo, settings_of
from bridge.config import BridgeSettings

if TYPE_CHECKING:  # the SDK is imported only when serving, in `load_sdk`
    from mcp.server.mcpserver import MCPServer

    from bridge.runtime import BridgeRuntime
    from host_client import HostClient


def add_parser(commands: Any) -> None:
    """Register the `serve` subcommand on the CLI's subparsers."""
    serve = commands.add_parser("serve", help="run the MCP server (stdio by default)")
    add_common(serve)
    serve.add_argument("--transport", choices=("stdio", "streamable-http"))
    serve.add_argument("--port", type=int, help="port for streamable HTTP (default 8000)")
    serve.add_argument("--http-host", help="bind address for streamable HTTP (default 127.0.0.1)")
    serve.add_argument(
        "--http-token",
        help="bearer token for streamable HTTP (prefer env ASP_BRIDGE_HTTP_TOKEN: argv is visible "
        "to other local users); required when --http-host is not loopback",
    )
    serve.add_argument(
        "--extension",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="offer the experimental extension dev.asp-mcp-bridge/asp-outer-seam (default: on)",
    )


def run(args: argparse.Namespace) -> int:
    """Handler of `serve`; raises ConfigError for bad settings."""
    settings = settings_of(
        args,
        transport=args.transport,
        port=args.port,
        http_host=args.http_host,
        http_token=args.http_token,
    )
    check_repo(settings.repo)
    logging.basicConfig(
        stream=sys.stderr, level=settings.log_level, format="%(levelname)s %(name)s: %(message)s"
    )
    if settings.transport == "streamable-http":
        from bridge.http import check_exposure

        check_exposure(settings)  # before anything starts
    from asp_protocol.proctree import become_subreaper

    become_subreaper()  # this process's only children are hosts: what they orphan comes back here
    if settings.transport == "stdio":
        anyio.run(serve_stdio, settings, args.extension)
        return 0
    from bridge.http import run_http

    server = build_server(settings, args.extension)
    url = f"http://{settings.http_host}:{settings.port}/mcp"
    print(f"asp-mcp-bridge: serving MCP over streamable HTTP at {url}", file=sys.stderr)
    run_http(server, settings)
    return 0


def build_server(
    settings: BridgeSettings, extension: bool, client: HostClient | None = None
) -> MCPServer[BridgeRuntime]:
    """The bridge's MCP server, with the experimental extension unless it is turned off."""
    from bridge.server import create_server  # the SDK loads only for commands that serve

    extensions: list[Any] = []
    middleware: list[Any] = []
    if extension:
        from bridge.ext.extension import build as build_extension

        built, middleware = build_extension()
        extensions.append(built)
    return create_server(settings, extensions=extensions, middleware=middleware, client=client)


def load_sdk() -> None:
    """Import what serving needs — the MCP SDK above all, most of a start's time."""
    import bridge.ext.extension
    import bridge.server
    import bridge.stdio  # noqa: F401


async def serve_stdio(settings: BridgeSettings, extension: bool) -> None:
    """Serve one stdio connection. Its host is started first and the SDK is imported in a worker
    thread meanwhile, so the host's own start-up runs beside the imports, not after them."""
    from host_client import HostClient

    async with HostClient(settings.host_client_settings()) as client:
        client.start_in_background()
        await anyio.to_thread.run_sync(load_sdk)
        from bridge import stdio
        from bridge.server import run_stdio

        server = build_server(settings, extension, client)
        if stdio.usable():  # pipes: the event-loop transport (bridge/stdio.py)
            await run_stdio(server)
        else:  # a file or terminal on stdin/stdout: the SDK's threaded transport copes with those
            await server.run_stdio_async()
