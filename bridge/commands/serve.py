"""`asp-mcp-bridge serve`: run the MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

import anyio

from bridge.commands.common import add_common, check_repo, settings_of


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
    from bridge.server import create_server, run_stdio  # the SDK loads only for commands that serve

    extensions: list[Any] = []
    middleware: list[Any] = []
    if args.extension:
        from bridge.ext.extension import build as build_extension

        extension, middleware = build_extension()
        extensions.append(extension)
    if settings.transport == "streamable-http":
        from bridge.http import check_exposure, run_http

        check_exposure(settings)  # before anything starts
    from host_client.tree import become_subreaper

    become_subreaper()  # this process's only children are hosts: what they orphan comes back here
    server = create_server(settings, extensions=extensions, middleware=middleware)
    if settings.transport == "stdio":
        from bridge import stdio

        if stdio.usable():
            anyio.run(run_stdio, server)
        else:  # a file or terminal on stdin/stdout: the SDK's threaded transport copes with those
            server.run("stdio")
    else:
        url = f"http://{settings.http_host}:{settings.port}/mcp"
        print(f"asp-mcp-bridge: serving MCP over streamable HTTP at {url}", file=sys.stderr)
        run_http(server, settings)
    return 0
