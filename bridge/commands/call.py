"""`asp-mcp-bridge call TOOL`: call one tool through a freshly spawned bridge over a real MCP session."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio

from bridge.commands.common import add_common, check_repo, passthrough, settings_of
from bridge.config import ConfigError


def add_parser(commands: Any) -> None:
    """Register the `call` subcommand on the CLI's subparsers."""
    call = commands.add_parser("call", help="call one tool through a freshly spawned bridge")
    call.add_argument("tool", help="tool name, e.g. asp_status")
    call.add_argument("--args", default="{}", help="tool arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the whole result as JSON")
    call.add_argument(
        "--mode", choices=("legacy", "auto"), default="legacy", help="MCP protocol era"
    )
    add_common(call)


def run(args: argparse.Namespace) -> int:
    """Handler of `call`: exit 1 when the tool answered an error."""
    repo = check_repo(settings_of(args).repo)
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        raise ConfigError(f"--args: not valid JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise ConfigError("--args: must be a JSON object")
    settings_of(args)  # validate the configuration here, with a clear message, before spawning
    return anyio.run(_call, args, repo, arguments)


async def _call(args: argparse.Namespace, repo: Path, arguments: dict[str, Any]) -> int:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", *passthrough(args, repo)],
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
            print(for_people(getattr(block, "text", f"[{block.type} content]")))
    return 1 if result.is_error else 0


_HOST_RESULT = re.compile(
    r"^Host result \(verbatim JSON[^\n]*\n<<<UNTRUSTED HOST RESULT (\w+) [^\n]*>>>\n"
    r"(.*?)\n<<<END UNTRUSTED HOST RESULT \1>>>$",
    re.M | re.S,
)


def for_people(text: str) -> str:
    """The tool's text for a terminal: the one-line JSON of the host result (often several KB)
    is replaced by its size and where to see it; everything else is printed as the tool wrote it."""
    return _HOST_RESULT.sub(
        lambda m: (
            f"(The host's full result, {len(m.group(2))} characters of JSON, is in the "
            "structured content: add --json to see it.)"
        ),
        text,
    )
