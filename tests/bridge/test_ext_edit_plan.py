"""`asp_ext_request_edit_plan` through the bridge against the real host and `asp-python-edit`:
the host's plan verbatim in the label envelope, a capped, fenced unified diff, nothing written,
and apply refused without reaching the host."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from bridge.ext.bakeoff import cases
from bridge.ext.bakeoff.workspace import prepare, snapshot
from bridge.ext.extension import APPLY_METHOD
from bridge.ext.plan_diff import MAX_DIFF_CHARS, unified_diff
from tests.support.definitions import assert_valid
from tests.support.ext_bridge import case_settings, extension_server, send
from tests.support.mcp_helpers import assert_labelled

pytestmark = pytest.mark.anyio


@pytest.mark.needs_definitions
async def test_edit_plan_tool_shows_the_plan_and_its_diff(tmp_path: Path) -> None:
    prepared = prepare(cases.select(["edit-plan-request"])[0], tmp_path, python=sys.executable)
    before = snapshot(prepared.repo)
    server, _ = extension_server(case_settings(prepared, timeout=60))
    async with Client(server) as client:
        result = await client.call_tool(
            "asp_ext_request_edit_plan",
            {
                "operation": "rename",
                "paths": ["src"],
                "args": {"symbol": "greet", "newName": "welcome"},
            },
        )
        envelope = assert_labelled(result, is_error=False, binding="mcp-extension")
        host_result = envelope["hostResult"]
        assert_valid(host_result, "outer-host.schema.json#/$defs/requestEditPlanResult")
        assert host_result["proposal"]["status"] == "complete"
        assert host_result["proposal"]["provider"]["id"] == "asp-python-edit"
        diff = envelope["bridgeResult"]["diff"]
        assert diff["truncated"] is False
        assert "--- a/src/app.py" in diff["text"] and "+def welcome(name):" in diff["text"]
        assert "-def greet(name):" in diff["text"]
        text = result.content[0].text
        assert "<<<UNTRUSTED PLAN DIFF" in text and "+def welcome(name):" in text
        assert "nothing was applied or written" in text
        assert snapshot(prepared.repo) == before, "a plan request writes nothing"
        # a real, cached proposal id: apply is still refused by the bridge, never forwarded
        params = {
            "callSite": "interactive",
            "proposalId": host_result["proposal"]["proposalId"],
            "intent": "agent",
        }
        with pytest.raises(MCPError) as caught:
            await send(client, APPLY_METHOD, params)
        assert caught.value.code == -32012
        trace = await client.call_tool("asp_debug_trace", {"limit": 100})
        methods = [e["method"] for e in assert_labelled(trace)["bridgeResult"]["entries"]]
        assert "host/applyProposal" not in methods and "host/proposalPreview" in methods
    assert snapshot(prepared.repo) == before


@pytest.mark.needs_definitions
async def test_a_plan_that_is_not_complete_says_why_in_the_text(tmp_path: Path) -> None:
    """The status and the provider's reason lead the text (fenced: host text), not only the JSON:
    an agent learns from it whether asking again can help."""
    prepared = prepare(cases.select(["edit-plan-request"])[0], tmp_path, python=sys.executable)
    server, _ = extension_server(case_settings(prepared, timeout=60))
    async with Client(server) as client:
        result = await client.call_tool(
            "asp_ext_request_edit_plan",
            {"operation": "rename", "paths": ["src"], "args": {"symbol": "nope", "newName": "x"}},
        )
        envelope = assert_labelled(result, is_error=False, binding="mcp-extension")
        proposal = envelope["hostResult"]["proposal"]
        assert proposal["status"] == "incomplete"
        text = result.content[0].text
        assert "Plan status: incomplete, nothing to apply." in text
        assert "<<<UNTRUSTED PLAN REASON" in text
        assert f"unresolved-reference: {proposal['incomplete']['detail']}" in text


def test_unified_diff_is_capped_and_names_omitted_files() -> None:
    big = {"path": "a.txt", "kind": "modify", "before": "x\n" * 30000, "after": "y\n" * 30000}
    text, truncated = unified_diff(
        {"files": [big, {"path": "b.bin", "kind": "modify", "omitted": "binary content"}]}
    )
    assert truncated is True and len(text) == MAX_DIFF_CHARS
    _, _ = unified_diff({"files": "not a list"})
    small, cut = unified_diff(
        {"files": [{"path": "b.bin", "kind": "modify", "omitted": "binary content"}]}
    )
    assert not cut and "(no text diff: binary content)" in small
