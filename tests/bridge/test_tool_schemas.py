"""Every published tool schema is strict enough for picky clients: no empty (`{}`) or boolean
subschema and a type (or combinator) everywhere — what MCP Inspector `--strict` and Claude Code's
own schema check reject."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from bridge.config import BridgeSettings
from bridge.server import CORE_TOOLS
from bridge.tools import ToolSpec, register
from tests.support.ext_bridge import extension_server
from tests.support.mcp_helpers import bad_host_argv

pytestmark = pytest.mark.anyio
TYPED = {"type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const"}


def loose_parts(schema: Any, where: str) -> list[str]:
    """JSON pointers of subschemas that say nothing about their value."""
    if not isinstance(schema, dict) or not schema or not TYPED & set(schema):
        return [f"{where}: {schema!r}"[:160]]
    found: list[str] = []
    for key in ("properties", "$defs", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items():
            found += loose_parts(sub, f"{where}/{key}/{name}")
    for key in ("items", "additionalProperties", "not"):
        sub = schema.get(key)
        if sub is not None and not isinstance(
            sub, bool
        ):  # `additionalProperties: bool` is explicit
            found += loose_parts(sub, f"{where}/{key}")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key) or []):
            found += loose_parts(sub, f"{where}/{key}/{i}")
    return found


def test_the_walker_finds_an_empty_item_schema() -> None:
    schema = {"type": "object", "properties": {"findings": {"type": "array", "items": {}}}}
    assert loose_parts(schema, "in") == ["in/properties/findings/items: {}"]


async def test_no_tool_schema_has_an_empty_or_untyped_part(tmp_path: Path) -> None:
    server, _ = extension_server(BridgeSettings(repo=tmp_path, host=list(bad_host_argv("ok"))))
    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        tools = (await client.list_tools()).tools
    assert any(t.name == "asp_migration_check" for t in tools)
    problems = [
        f"{tool.name} {part}"
        for tool in tools
        for part in loose_parts(tool.input_schema, "inputSchema")
        + (loose_parts(tool.output_schema, "outputSchema") if tool.output_schema else [])
    ]
    assert not problems, "\n".join(problems)


async def test_only_tools_measured_above_the_client_default_raise_its_size_limit(
    tmp_path: Path,
) -> None:
    server, _ = extension_server(BridgeSettings(repo=tmp_path, host=list(bad_host_argv("ok"))))
    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        tools = (await client.list_tools()).tools
    declared = {t.name: (t.meta or {}).get("anthropic/maxResultSizeChars") for t in tools}
    assert declared.pop("asp_inspect") == declared.pop("asp_migration_check") == 100_000
    assert declared.pop("asp_ext_evaluate_changeset") == 100_000
    assert set(declared.values()) == {None}  # bounded far below 50,000 chars (measured)


def test_register_refuses_a_tool_outside_the_house_prefix() -> None:
    """The newcomer's docs said nothing checked the `asp_` prefix; `register` now does, before
    the server holds anything."""
    server: MCPServer[Any] = MCPServer("probe")
    first = CORE_TOOLS[0]
    stray = ToolSpec("policy", "Policy", "The policy.", first.fn)
    with pytest.raises(ValueError, match="does not match"):
        register(server, [stray])
    assert register(server, [first]) == [first.name]
