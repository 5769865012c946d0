"""`asp-mcp-bridge`: every subcommand lives in this package, one module each.

`serve` runs the bridge, `call` calls one tool through a real MCP session, `client-config` prints a
client entry, `bakeoff` measures the extension against the native binding, `migration-check` runs
the migration tool from the command line. Feature packages hold no CLI code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from types import ModuleType

from bridge.config import ConfigError

#: subcommand -> its module in this package. Only the module of the subcommand run is imported:
#: `serve` does not load what `bakeoff` or `migration-check` need (a start's time is the SDK's).
SUBCOMMANDS = {
    "serve": "serve",
    "call": "call",
    "client-config": "client_config",
    "bakeoff": "bakeoff",
    "migration-check": "migration_check",
}


def command_module(name: str) -> ModuleType:
    return importlib.import_module(f"bridge.commands.{SUBCOMMANDS[name]}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI parser: every subcommand, or only *only* (what `main` uses when argv names one)."""
    parser = argparse.ArgumentParser(
        prog="asp-mcp-bridge",
        description="A read-only, NON-AUTHORITATIVE MCP bridge to an ASP host.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name in [only] if only is not None else SUBCOMMANDS:
        command_module(name).add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    warnings.filterwarnings("ignore", message=".*SEP-2577.*")
    words = sys.argv[1:] if argv is None else argv
    only = words[0] if words and words[0] in SUBCOMMANDS else None
    args = build_parser(only).parse_args(words)
    try:
        code = command_module(args.command).run(args)
    except ConfigError as exc:
        print(f"asp-mcp-bridge: {exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
