"""`asp-mcp-bridge client-config --client NAME`: print a ready MCP client configuration entry."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from bridge.commands.common import add_common, check_repo, passthrough, settings_of

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")
SERVER_KEY = "asp"
# Found by following this command's own advice on Django: the untracked `.mcp.json` joined the
# working change, and since no built-in provider reads JSON every evaluation of the working tree
# came back `indeterminate` ("analysed by no required provider: .mcp.json").
IN_REPO_NOTE = (
    "# a file inside the repository is part of its working change until it is committed or "
    "listed in .git/info/exclude: no built-in provider checks JSON, so until then every "
    "evaluation of the working tree is indeterminate (and its absolute paths are this machine's)"
)


def add_parser(commands: Any) -> None:
    """Register the `client-config` subcommand on the CLI's subparsers."""
    config = commands.add_parser(
        "client-config", help="print a ready MCP client configuration entry"
    )
    config.add_argument("--client", choices=CLIENTS, required=True)
    add_common(config)


def _launcher() -> tuple[str, list[str]]:
    """Absolute command for clients (GUI clients do not inherit the shell PATH)."""
    script = Path(sys.executable).parent / "asp-mcp-bridge"
    if script.is_file():
        return str(script), []
    found = shutil.which("asp-mcp-bridge")
    if found:
        return str(Path(found).resolve()), []
    return sys.executable, ["-m", "bridge"]


def run(args: argparse.Namespace) -> int:
    """Handler of `client-config`."""
    repo = check_repo(settings_of(args).repo)
    settings_of(args)
    command, prefix = _launcher()
    entry: dict[str, Any] = {"command": command, "args": [*prefix, *passthrough(args, repo)]}
    if args.client == "vscode":
        document: dict[str, Any] = {"servers": {SERVER_KEY: {"type": "stdio", **entry}}}
        where = "your user mcp.json (MCP: Open User Configuration), or <repo>/.vscode/mcp.json"
    elif args.client == "claude-desktop":
        document = {"mcpServers": {SERVER_KEY: entry}}
        where = "claude_desktop_config.json (macOS ~/Library/Application Support/Claude/)"
    elif args.client == "cursor":
        document = {"mcpServers": {SERVER_KEY: {"type": "stdio", **entry}}}
        where = "~/.cursor/mcp.json, or <repo>/.cursor/mcp.json"
    else:
        document = {"mcpServers": {SERVER_KEY: {"type": "stdio", **entry}}}
        where = "claude mcp add-json asp '<the inner object>' (local scope), or <repo>/.mcp.json"
    print(json.dumps(document, indent=2))
    print(f"# {args.client}: put this in {where}", file=sys.stderr)
    if args.client != "claude-desktop":
        print(IN_REPO_NOTE, file=sys.stderr)
    return 0
