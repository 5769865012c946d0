"""A wrong tool argument or an unknown tool comes back as one labelled line naming the argument and
what it accepts, in both protocol eras — not pydantic's multi-line report."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from bridge.arguments import accepted
from bridge.config import BridgeSettings
from bridge.server import create_server
from tests.support.mcp_helpers import assert_labelled, bad_host_argv

pytestmark = pytest.mark.anyio
CASES = [
    (
        "asp_inspect",
        {"verb": "everything"},
        'asp_inspect: argument `verb` = "everything" is not accepted; it takes one of '
        '"symbols", "references", "callers", "callees", "impact"',
    ),
    (
        "asp_inspect",
        {},
        "asp_inspect: argument `verb` is required; it takes one of "
        '"symbols", "references", "callers", "callees", "impact"',
    ),
    (
        "asp_inspect",
        {"verb": "symbols", "limit": 0},
        "asp_inspect: argument `limit` = 0 is not accepted; it takes an integer from 1 to 10000 "
        "or null (omit it)",
    ),
    (
        "asp_migration_check",
        {"comparison": "resolved"},
        'asp_migration_check: argument `comparison` = "resolved" is not accepted; it takes one '
        'of "all", "introduced"',
    ),
    (
        "asp_migration_check",
        {"findings": [1]},
        "asp_migration_check: argument `findings[0]` = 1 is not accepted; it takes an object",
    ),
]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_argument_errors_are_one_readable_line(tmp_path: Path, mode: str) -> None:
    settings = BridgeSettings(repo=tmp_path, host=list(bad_host_argv("ok")))
    async with Client(create_server(settings), mode=mode) as client:  # type: ignore[arg-type]
        for tool, arguments, expected in CASES:
            error = assert_labelled(await client.call_tool(tool, arguments), is_error=True)["error"]
            assert error["reason"] == "refused" and error["message"] == expected
            assert error.get("detail") is None and "\n" not in error["message"]
        unknown = assert_labelled(await client.call_tool("asp_statu", {}), is_error=True)
        assert unknown["error"]["message"].startswith("unknown tool `asp_statu`; the listed tools")
        assert "asp_status" in unknown["error"]["message"]


def test_accepted_describes_bounds_and_alternatives() -> None:
    root = {"$defs": {"Kind": {"enum": ["a", "b"]}}}
    assert accepted({"$ref": "#/$defs/Kind"}, root) == 'one of "a", "b"'
    assert accepted({"type": "integer", "minimum": 0}, root) == "an integer ≥ 0"
    assert accepted({"type": "array", "items": {"type": "boolean"}}, root) == (
        "an array whose items are true or false"
    )
