"""`asp-mcp-bridge`: `serve` the bridge, `call` one tool through a real MCP session, print `client-config`."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio

from bridge.config import BridgeSettings, ConfigError, load_settings
from bridge.ext.bakeoff import command as bakeoff_command
from bridge.migration import command as migration_command

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")
SERVER_KEY = "asp"


def _common(parser: argparse.ArgumentParser, *, repo_required: bool = True) -> None:
    parser.add_argument(
        "--repo", type=Path, required=repo_required, help="workspace the host serves"
    )
    parser.add_argument(
        "--host",
        help='whole host command line, split like a shell; "{repo}" becomes the absolute workspace, '
        "else `serve --repo <workspace>` is appended (default: this installation's reference host)",
    )
    parser.add_argument("--timeout", type=float, help="per-call deadline in seconds (default 60)")
    parser.add_argument("--config", type=Path, help="JSON config file (see config/bridge.json)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asp-mcp-bridge",
        description="A read-only, NON-AUTHORITATIVE MCP bridge to an ASP host.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the MCP server (stdio by default)")
    _common(serve)
    serve.add_argument("--transport", choices=("stdio", "streamable-http"))
    serve.add_argument("--port", type=int, help="port for streamable HTTP (default 8000)")
    serve.add_argument(
        "--extension",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="offer the experimental extension dev.asp-mcp-bridge/asp-outer-seam (default: on)",
    )
    call = commands.add_parser("call", help="call one tool through a freshly spawned bridge")
    call.add_argument("tool", help="tool name, e.g. asp_status")
    call.add_argument("--args", default="{}", help="tool arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the whole result as JSON")
    call.add_argument(
        "--mode", choices=("legacy", "auto"), default="legacy", help="MCP protocol era"
    )
    _common(call)
    config = commands.add_parser(
        "client-config", help="print a ready MCP client configuration entry"
    )
    config.add_argument("--client", choices=CLIENTS, required=True)
    _common(config)
    bakeoff_command.add_parser(commands)
    migration_command.add_parser(commands, _common)
    return parser


def _settings(args: argparse.Namespace, **extra: Any) -> BridgeSettings:
    overrides = {"repo": args.repo, "host": args.host, "timeout": args.timeout, **extra}
    return load_settings(config_file=args.config, overrides=overrides)


def _check_repo(path: Path | None) -> Path:
    repo = (path or Path.cwd()).resolve()
    if not repo.is_dir():
        raise ConfigError(f"--repo {path}: not a directory")
    return repo


def serve(args: argparse.Namespace) -> int:
    settings = _settings(args, transport=args.transport, port=args.port)
    _check_repo(settings.repo)
    logging.basicConfig(
        stream=sys.stderr, level=settings.log_level, format="%(levelname)s %(name)s: %(message)s"
    )
    from bridge.server import create_server  # the MCP SDK loads only for commands that serve

    extensions: list[Any] = []
    middleware: list[Any] = []
    if args.extension:
        from bridge.ext.extension import build as build_extension

        extension, middleware = build_extension()
        extensions.append(extension)
    server = create_server(settings, extensions=extensions, middleware=middleware)
    if settings.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=settings.http_host, port=settings.port)
    return 0


def _passthrough(args: argparse.Namespace, repo: Path) -> list[str]:
    argv = ["serve", "--repo", str(repo)]
    if args.host is not None:
        argv += ["--host", args.host]
    if args.timeout is not None:
        argv += ["--timeout", repr(args.timeout)]
    if args.config is not None:
        argv += ["--config", str(args.config.resolve())]
    return argv


def call(args: argparse.Namespace) -> int:
    repo = _check_repo(args.repo)
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        raise ConfigError(f"--args: not valid JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise ConfigError("--args: must be a JSON object")
    _settings(args)  # validate the configuration here, with a clear message, before spawning
    return anyio.run(_call, args, repo, arguments)


async def _call(args: argparse.Namespace, repo: Path, arguments: dict[str, Any]) -> int:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", *_passthrough(args, repo)],
        env=dict(os.environ),
        cwd=str(repo),
    )
    async with Client(params, mode=args.mode) as client:
        result = await client.call_tool(args.tool, arguments)
    if args.json:
        print(
            json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2)
        )
    else:
        for block in result.content:
            print(getattr(block, "text", f"[{block.type} content]"))
    return 1 if result.is_error else 0


def _launcher() -> tuple[str, list[str]]:
    """Absolute command for clients (GUI clients do not inherit the shell PATH)."""
    script = Path(sys.executable).parent / "asp-mcp-bridge"
    if script.is_file():
        return str(script), []
    found = shutil.which("asp-mcp-bridge")
    if found:
        return str(Path(found).resolve()), []
    return sys.executable, ["-m", "bridge"]


def client_config(args: argparse.Namespace) -> int:
    repo = _check_repo(args.repo)
    _settings(args)
    command, prefix = _launcher()
    entry: dict[str, Any] = {"command": command, "args": [*prefix, *_passthrough(args, repo)]}
    if args.client == "vscode":
        document: dict[str, Any] = {"servers": {SERVER_KEY: {"type": "stdio", **entry}}}
        where = "<repo>/.vscode/mcp.json (or your user mcp.json)"
    elif args.client == "claude-desktop":
        document = {"mcpServers": {SERVER_KEY: entry}}
        where = "claude_desktop_config.json (macOS ~/Library/Application Support/Claude/)"
    elif args.client == "cursor":
        document = {"mcpServers": {SERVER_KEY: {"type": "stdio", **entry}}}
        where = "<repo>/.cursor/mcp.json or ~/.cursor/mcp.json"
    else:
        document = {"mcpServers": {SERVER_KEY: {"type": "stdio", **entry}}}
        where = "<repo>/.mcp.json (project scope), or: claude mcp add-json asp '<the inner object>'"
    print(json.dumps(document, indent=2))
    print(f"# {args.client}: put this in {where}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> None:
    warnings.filterwarnings("ignore", message=".*SEP-2577.*")
    args = build_parser().parse_args(argv)
    handlers = {
        "serve": serve,
        "call": call,
        "client-config": client_config,
        "bakeoff": bakeoff_command.run,
        "migration-check": migration_command.run,
    }
    try:
        code = handlers[args.command](args)
    except ConfigError as exc:
        print(f"asp-mcp-bridge: {exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
