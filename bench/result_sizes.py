"""Result-size measurement (not a test): how many characters each tool's `structuredContent` puts
in front of a model that reads only structured content (Claude Code), and how big the text is.

    python bench/result_sizes.py [--repo PATH] [--limit 100000]

Runs the bridge in memory on the reference host (default: this repository), calls every tool
once (asp_inspect also pages through the whole workspace), and prints the largest serialized
structuredContent per tool next to Claude Code's default inline limit of 50,000 characters. The
tools that can exceed it get `_meta["anthropic/maxResultSizeChars"]` (bridge/structured.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bridge.config import BridgeSettings
from bridge.ext.extension import build as build_extension
from bridge.server import create_server

ROOT = Path(__file__).resolve().parents[1]
CLIENT_DEFAULT = 50_000
# tool -> the argument sets it is called with, in this order
CALLS: dict[str, list[dict[str, Any]]] = {
    "asp_status": [{}],
    "asp_capabilities": [{}],
    "asp_authority_status": [{}],
    "asp_inspect": [
        {"verb": "symbols"},
        {"verb": "references", "symbol": "JsonRpcEndpoint"},
        {"verb": "impact", "path": "pkg"},
        {"verb": "impact", "path": "asp_protocol/canonical.py"},
    ],
    "asp_migration_check": [{"findings": []}],
    "asp_debug_host": [{}],
    "asp_debug_trace": [{"limit": 200}],
    "asp_ext_evaluate_changeset": [{"callSite": "sweep"}],
    "asp_ext_request_edit_plan": [
        {
            "operation": "remove-unused-imports",
            "paths": ["asp_protocol"],
            "args": {"paths": ["asp_protocol"]},
        }
    ],
}


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


async def measure(repo: Path, limit: int) -> dict[str, tuple[int, int, int]]:
    """{tool: (largest structured chars, largest text chars, calls)}."""
    extension, middleware = build_extension()
    settings = BridgeSettings(
        repo=repo,
        host=[sys.executable, "-m", "reference_host", "serve", "--repo", "{repo}"],
        structured_max_chars=limit,
        timeout=120,
    )
    server = create_server(settings, extensions=[extension], middleware=middleware)
    sizes: dict[str, tuple[int, int, int]] = {}

    def note(name: str, result: Any) -> None:
        text = sum(len(getattr(block, "text", "")) for block in result.content)
        old = sizes.get(name, (0, 0, 0))
        sizes[name] = (max(old[0], size(result.structured_content)), max(old[1], text), old[2] + 1)

    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        listed = {tool.name for tool in (await client.list_tools()).tools}
        if listed != set(CALLS):  # a new tool is measured, not skipped without a word
            raise SystemExit(f"tools not in CALLS: {sorted(listed - set(CALLS))}")
        for name, argument_sets in CALLS.items():
            for arguments in argument_sets:
                note(name, await client.call_tool(name, arguments))
        cursor = None
        for _ in range(1000):  # every page of the workspace's symbols
            args: dict[str, Any] = {"verb": "symbols"} | ({"cursor": cursor} if cursor else {})
            result = await client.call_tool("asp_inspect", args)
            note("asp_inspect", result)
            cursor = (
                ((result.structured_content or {}).get("bridgeResult") or {})
                .get("inspect", {})
                .get("nextCursor")
            )
            if cursor is None:
                break
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--limit", type=int, default=100_000)
    args = parser.parse_args()
    sizes = anyio.run(measure, args.repo.resolve(), args.limit)
    print(f"repository {args.repo.resolve()}, structured_max_chars {args.limit}")
    print(
        "| tool | calls | largest structuredContent (chars) | largest text (chars) | over 50,000 |"
    )
    print("|---|---:|---:|---:|---|")
    for name, (structured, text, calls) in sorted(sizes.items()):
        over = "yes" if structured > CLIENT_DEFAULT else "no"
        print(f"| `{name}` | {calls} | {structured} | {text} | {over} |")


if __name__ == "__main__":
    main()
