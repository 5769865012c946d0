"""`asp-mcp-bridge migration-check`: the `asp_migration_check` tool from the command line.

It runs the tool through a real MCP session with the bridge in this process (the bridge then
spawns and supervises the host as usual) and prints the readable report, or the labelled JSON
envelope with `--json`. Exit status: 0 when the check ran (whatever it found — this is evidence,
not a gate), 1 when the tool returned an error, 2 for bad arguments or files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import anyio

from bridge.commands.common import add_common, check_repo, settings_of
from bridge.migration.findings import FindingsError, load_findings
from bridge.migration.report import MigrationReport, render_text

TOOL = "asp_migration_check"


class ArgumentsError(Exception):
    """A file or argument the check cannot use; printed and exit status 2."""


def add_parser(commands: Any) -> None:
    """Register the `migration-check` subcommand on the CLI's subparsers."""
    parser = commands.add_parser(
        "migration-check",
        help="can the ASP host serve what an old tool did? (coverage and finding parity)",
        description="Map legacy names to ASP capabilities and read the host's coverage; with "
        "--findings, run one interactive host/evaluateChangeset and match the old tool's findings. "
        "NON-AUTHORITATIVE: never claims a replacement.",
    )
    parser.add_argument(
        "--legacy",
        nargs="+",
        default=[],
        metavar="NAME",
        help="legacy names: sense judge act, sense/references judge/evaluate act/propose ..., "
        "crg rox cix, or tool surfaces such as crg:impact (default: every protocol legacy name)",
    )
    parser.add_argument(
        "--findings",
        type=Path,
        help="the old tool's findings: JSON array of ASP Diagnostics or SARIF results, or a SARIF log",
    )
    parser.add_argument(
        "--findings-format", choices=("auto", "asp", "sarif"), default="auto", help="default auto"
    )
    parser.add_argument(
        "--changeset",
        type=Path,
        help="the change as an ASP ChangeSet JSON file (default: the host's working-tree changeset)",
    )
    parser.add_argument(
        "--line-tolerance", type=int, default=2, help="lines apart two findings may still match"
    )
    parser.add_argument("--json", action="store_true", help="print the labelled JSON result")
    add_common(parser)


def _read_json(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ArgumentsError(f"--{what} {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ArgumentsError(f"--{what} {path}: not JSON: {exc}") from None


def tool_arguments(args: argparse.Namespace, repo: Path) -> dict[str, Any]:
    """The tool's arguments from the command line; findings are checked here for a clear message."""
    arguments: dict[str, Any] = {"legacy": list(args.legacy), "line_tolerance": args.line_tolerance}
    if args.findings is not None:
        data = _read_json(args.findings, "findings")
        try:
            load_findings(json.dumps(data), format=args.findings_format, repo_root=str(repo))
        except FindingsError as exc:
            raise ArgumentsError(f"--findings {args.findings}: {exc}") from None
        arguments["findings"] = data
        arguments["findings_format"] = args.findings_format
    if args.changeset is not None:
        arguments["changeset"] = _read_json(args.changeset, "changeset")
    return arguments


def run(args: argparse.Namespace) -> int:
    """Handler of `migration-check`; raises the CLI's ConfigError for bad settings."""
    repo = check_repo(settings_of(args).repo)
    settings = settings_of(args)
    if settings.repo is None:
        settings = settings.model_copy(update={"repo": repo})
    try:
        arguments = tool_arguments(args, repo)
    except ArgumentsError as exc:
        print(f"asp-mcp-bridge migration-check: {exc}", file=sys.stderr)
        return 2
    result = anyio.run(_call, settings, arguments)
    return _print(result, as_json=args.json)


async def _call(settings: Any, arguments: dict[str, Any]) -> Any:
    from mcp import Client

    from bridge.server import CORE_TOOLS, create_server
    from bridge.tools import migration as migration_tools

    registered = {spec.name for spec in CORE_TOOLS}
    extra = () if TOOL in registered else migration_tools.TOOLS
    async with Client(create_server(settings, extra_tools=extra), mode="legacy") as client:
        return await client.call_tool(TOOL, arguments)


def _print(result: Any, *, as_json: bool) -> int:
    envelope = result.structured_content if isinstance(result.structured_content, dict) else {}
    if as_json:
        print(json.dumps(envelope, indent=2, ensure_ascii=False))
        return 1 if result.is_error else 0
    headline = result.content[0].text.splitlines()[0] if result.content else "NON-AUTHORITATIVE"
    if result.is_error:
        error = envelope.get("error") or {}
        print(headline, file=sys.stderr)
        print(f"error ({error.get('reason', '?')}): {error.get('message', '')}", file=sys.stderr)
        return 1
    report = MigrationReport.model_validate(envelope["bridgeResult"]["migrationCheck"])
    print(headline)
    print(render_text(report), end="")
    return 0
