"""`asp-mcp-bridge`: every subcommand lives in this package, one module each.

`serve` runs the bridge, `call` calls one tool through a real MCP session, `client-config` prints a
client entry, `bakeoff` measures the extension against the native binding, `migration-check` runs
the migration tool from the command line. Feature packages hold no CLI code.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from bridge.commands import bakeoff, call, client_config, migration_check, serve
from bridge.config import ConfigError

SUBCOMMANDS = {
    "serve": serve,
    "call": call,
    "client-config": client_config,
    "bakeoff": bakeoff,
    "migration-check": migration_check,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asp-mcp-bridge",
        description="A read-only, NON-AUTHORITATIVE MCP bridge to an ASP host.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS.values():
        module.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    warnings.filterwarnings("ignore", message=".*SEP-2577.*")
    args = build_parser().parse_args(argv)
    try:
        code = SUBCOMMANDS[args.command].run(args)
    except ConfigError as exc:
        print(f"asp-mcp-bridge: {exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
