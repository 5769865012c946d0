"""The `asp-mcp-bridge` console script's entry point; the subcommands live in `bridge/commands/`."""

from bridge.commands import main

__all__ = ["main"]
