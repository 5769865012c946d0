"""The extension in memory (`Client(server)`), in both eras, against the real reference host.

Workspaces come from the bake-off's own case preparation (a real git repo, trusted manifests for
fake providers, a pinned policy), so these tests exercise the same setup the bake-off measures.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from asp_protocol.canonical import request_digest
from bridge.config import BridgeSettings
from bridge.ext import EXTENSION_ID
from bridge.ext.bakeoff import plan
from bridge.ext.bakeoff.workspace import PreparedCase, snapshot
from bridge.ext.extension import APPLY_METHOD, FORWARDED, AspOuterSeamExtension
from bridge.server import create_server
from tests.support.definitions import assert_valid
from tests.support.ext_bridge import (
    cancel_an_evaluate,
    case_settings,
    extension_server,
    prepared_case,
    send,
)
from tests.support.mcp_helpers import LABEL_KEY, assert_labelled

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


@pytest.fixture
def allow_case(tmp_path: Path) -> PreparedCase:
    return prepared_case(tmp_path)


@asynccontextmanager
async def bridge(
    prepared: PreparedCase, mode: str
) -> AsyncIterator[tuple[Client, AspOuterSeamExtension]]:
    server, extension = extension_server(case_settings(prepared))
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        yield client, extension


def assert_envelope(envelope: dict[str, Any], method: str, call_site: str | None) -> dict[str, Any]:
    """The extension's label: mcp-extension binding, never a gate, host result kept verbatim."""
    assert envelope["nonAuthoritative"] is True
    assert envelope["authority"]["authoritative"] is False
    assert envelope["authority"]["gateSatisfied"] is False
    assert envelope["authority"]["binding"] == "mcp-extension"
    assert envelope["hostMethod"] == method
    assert envelope["callSite"] == call_site
    assert envelope["_meta"][LABEL_KEY]["gateSatisfied"] is False
    assert envelope["host"]["name"] == "asp-reference-host"
    return envelope["hostResult"]


@pytest.mark.parametrize("mode", MODES)
async def test_advertised_under_extensions_and_experimental(
    allow_case: PreparedCase, mode: str
) -> None:
    async with bridge(allow_case, mode) as (client, _):
        caps = client.server_capabilities
        assert caps is not None
        for field in (caps.experimental, caps.extensions):
            settings = (field or {})[EXTENSION_ID]
            assert settings["authoritative"] is False
            assert settings["gateEligible"] is False
            assert set(settings["methods"]) == {*FORWARDED, APPLY_METHOD}
            assert settings["refusedMethods"] == [APPLY_METHOD]
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"asp_ext_evaluate_changeset", "asp_status"} <= names
        # edit-plan is listed exactly when the host reports its edit capability (bridge/listing.py).
        # The first list waits only a bounded time for the warm-up's capabilities read (a cold host
        # under load may answer later, and the client then hears list_changed), so the rule is
        # checked on a list taken once the bridge has seen a capabilities result pass through.
        caps_result = await send(client, "asp/host/capabilities")
        edit = caps_result["hostResult"]["capabilities"]["edit"]
        names = {t.name for t in (await client.list_tools()).tools}
        assert ("asp_ext_request_edit_plan" in names) is (edit["available"] is True)


@pytest.mark.needs_definitions
@pytest.mark.parametrize("mode", MODES)
async def test_read_methods_forward_verbatim(allow_case: PreparedCase, mode: str) -> None:
    async with bridge(allow_case, mode) as (client, _):
        for method, ref in (
            ("host/status", "statusResult"),
            ("host/capabilities", "capabilitiesResult"),
            ("host/authority/status", "authorityStatusResult"),
        ):
            result = assert_envelope(await send(client, "asp/" + method), method, None)
            assert_valid(result, f"outer-host.schema.json#/$defs/{ref}")
        status = await send(client, "asp/host/status")
        assert status["hostResult"]["workspace"]["root"] == str(allow_case.repo)


@pytest.mark.needs_definitions
@pytest.mark.parametrize("mode", MODES)
async def test_evaluate_preserves_every_call_site_including_gate(
    allow_case: PreparedCase, mode: str
) -> None:
    async with bridge(allow_case, mode) as (client, _):
        for call_site in ("gate", "interactive", "sweep"):
            params = {"callSite": call_site, "changeset": allow_case.changeset}
            envelope = await send(client, "asp/host/evaluateChangeset", params)
            result = assert_envelope(envelope, "host/evaluateChangeset", call_site)
            assert_valid(result, "outer-host.schema.json#/$defs/evaluateChangesetResult")
            assert result["callSite"] == call_site
            assert result["decision"] == "allow"
            # The host's digest of what it received equals the digest of what the client sent:
            # the params crossed the extension unchanged.
            assert result["requestDigest"] == request_digest("host/evaluateChangeset", params)


@pytest.mark.needs_definitions
@pytest.mark.parametrize("mode", MODES)
async def test_inspect_and_edit_plan_pass_the_host_answer_on(
    allow_case: PreparedCase, mode: str
) -> None:
    """queryInspect and requestEditPlan answers pass on verbatim (the host has the edit profile)."""
    inspect = {"callSite": "interactive", "request": {"verb": "symbols"}}
    async with bridge(allow_case, mode) as (client, _):
        envelope = await send(client, "asp/host/queryInspect", inspect)
        assert_envelope(envelope, "host/queryInspect", "interactive")
        assert_valid(envelope["hostResult"], "outer-host.schema.json#/$defs/queryInspectResult")
        assert envelope["hostResult"]["receipt"]["kind"] == "inspect"
        planned = await send(client, "asp/host/requestEditPlan", plan.edit_plan_params(allow_case))
    result = assert_envelope(planned, "host/requestEditPlan", "interactive")
    assert_valid(result, "outer-host.schema.json#/$defs/requestEditPlanResult")
    assert result["receipt"]["kind"] == "edit-request"
    assert "proposal" in result


@pytest.mark.parametrize("mode", MODES)
async def test_apply_is_refused_and_never_forwarded(allow_case: PreparedCase, mode: str) -> None:
    before = snapshot(allow_case.repo)
    async with bridge(allow_case, mode) as (client, _):
        await send(client, "asp/host/status")  # the host is running: a forward would reach it
        params = {"callSite": "gate", "proposalId": "p-1", "intent": "agent"}
        with pytest.raises(MCPError) as caught:
            await send(client, APPLY_METHOD, params)
        assert caught.value.code == -32012
        assert "mediated apply is unavailable" in caught.value.message
        data = caught.value.data
        assert data["error"]["reason"] == "refused"
        assert data["error"]["failClass"] == "policy"
        assert data["authority"]["gateSatisfied"] is False
        assert data["callSite"] == "gate"
        trace = await client.call_tool("asp_debug_trace", {"limit": 100})
        methods = [e["method"] for e in assert_labelled(trace)["bridgeResult"]["entries"]]
        assert "host/applyProposal" not in methods
        assert "host/status" in methods
    assert snapshot(allow_case.repo) == before


@pytest.mark.parametrize("mode", MODES)
async def test_host_progress_becomes_mcp_progress(tmp_path: Path, mode: str) -> None:
    prepared = prepared_case(tmp_path, "slow-progress")
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with bridge(prepared, mode) as (client, _):
        envelope = await send(
            client,
            "asp/host/evaluateChangeset",
            plan.evaluate_params(prepared),
            progress_callback=on_progress,
        )
    assert envelope["hostResult"]["decision"] == "allow"
    assert len(seen) >= 3
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)
    assert all(m and m.startswith("host progress (untrusted): ") for _, m in seen)


async def test_mcp_cancellation_reaches_the_host_and_is_recorded(tmp_path: Path) -> None:
    """Legacy era: in-memory modern mode carries no client-to-server notifications."""
    prepared = prepared_case(tmp_path, "hang", "--hang-seconds", "60")
    async with bridge(prepared, "legacy") as (client, extension):
        await cancel_an_evaluate(client, prepared)
        record: dict[str, Any] = {}
        with anyio.fail_after(10):
            while not record.get("hostReply"):
                await anyio.sleep(0.05)
                records = extension.cancellations.snapshot()
                record = records[-1] if records else {}
        assert record["method"] == "host/evaluateChangeset"
        assert record["callSite"] == "gate"
        assert record["cancelSent"] is True
        assert record["hostReply"] == "error"  # the host answered the cancelled request (-32016)
        trace = await client.call_tool("asp_debug_trace", {"limit": 10})
        entries = assert_labelled(trace)["bridgeResult"]["entries"]
        entry = next(e for e in entries if e["method"] == "host/evaluateChangeset")
        assert entry["outcome"] == "cancelled" and entry["cancelSent"] is True


@pytest.mark.parametrize("mode", MODES)
async def test_tools_evaluate_the_working_tree_and_never_gate(
    allow_case: PreparedCase, mode: str
) -> None:
    async with bridge(allow_case, mode) as (client, _):
        result = await client.call_tool("asp_ext_evaluate_changeset", {"callSite": "sweep"})
        envelope = assert_labelled(result, is_error=False, binding="mcp-extension")
        assert envelope["hostResult"]["callSite"] == "sweep"
        assert envelope["hostResult"]["decision"] == "allow"
        changed = envelope["hostResult"]["validAsOf"]
        assert changed["rev"] == allow_case.baseline["rev"]

        inline = await client.call_tool(
            "asp_ext_evaluate_changeset", {"changeset": allow_case.changeset}
        )
        assert assert_labelled(inline, is_error=False, binding="mcp-extension")["callSite"] == (
            "interactive"
        )
        count = len({c["path"] for c in allow_case.changeset["changes"]})
        assert f"Paths evaluated: {count} of {count} changed." in inline.content[0].text
        reading = assert_labelled(inline, binding="mcp-extension")["bridgeResult"]["evaluation"]
        assert reading["pathsChanged"] == reading["pathsEvaluated"] == count
        assert reading["decision"] == "allow" and reading["nextStep"] in inline.content[0].text
        empty = {"baseline": allow_case.changeset["baseline"], "changes": []}
        nothing = await client.call_tool("asp_ext_evaluate_changeset", {"changeset": empty})
        assert "Paths evaluated: 0 (the ChangeSet is empty" in nothing.content[0].text
        reading = assert_labelled(nothing, binding="mcp-extension")["bridgeResult"]["evaluation"]
        assert reading["pathsChanged"] == reading["pathsEvaluated"] == 0
        assert reading["nextStep"].startswith("Next step: none — nothing changed")

        gate = await client.call_tool("asp_ext_evaluate_changeset", {"callSite": "gate"})
        assert gate.is_error
        assert assert_labelled(gate)["error"]["reason"] == "refused"
        trace = await client.call_tool("asp_debug_trace", {"limit": 100})
        sites = [e["callSite"] for e in assert_labelled(trace)["bridgeResult"]["entries"]]
        assert "sweep" in sites and "gate" not in sites

        plan_result = await client.call_tool(
            "asp_ext_request_edit_plan", {"operation": "rename", "paths": ["src/app.py"]}
        )
        envelope = assert_labelled(plan_result, binding="mcp-extension")
        if plan_result.is_error:  # the reference host has no edit profile yet
            assert envelope["error"]["reason"] == "host-error"
            assert envelope["error"]["failClass"] == "contract"
        else:
            assert "proposal" in envelope["hostResult"]


def _set_adapters(repo: Path, adapters: dict[str, Any]) -> None:
    path = repo / ".asp" / "asp.json"
    policy = json.loads(path.read_text())
    policy["adapters"] = {"mcp": adapters}
    path.write_text(json.dumps(policy, indent=2) + "\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
        "HOME": str(repo),
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(["git", "add", ".asp/asp.json"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "policy"], cwd=repo, env=env, check=True)


async def test_adapter_policy_disabled_refuses_every_tool_and_method(
    allow_case: PreparedCase,
) -> None:
    _set_adapters(allow_case.repo, {"enabled": False})
    async with bridge(allow_case, "legacy") as (client, _):
        for method in ("asp/host/status", "asp/host/evaluateChangeset"):
            with pytest.raises(MCPError) as caught:
                await send(client, method, plan.evaluate_params(allow_case))
            assert caught.value.code == -32012
            assert ".asp/asp.json" in caught.value.message
            assert "adapters.mcp.enabled is false" in caught.value.message
        for tool, args in (("asp_status", {}), ("asp_ext_evaluate_changeset", {})):
            result = await client.call_tool(tool, args)
            envelope = assert_labelled(result, is_error=True, binding=envelope_binding(tool))
            assert envelope["error"]["reason"] == "refused"
            assert "adapters.mcp.enabled is false" in envelope["error"]["message"]


def envelope_binding(tool: str) -> str:
    return "mcp-extension" if tool.startswith("asp_ext_") else "mcp-tool"


async def test_inspect_status_only_refuses_evaluate_until_the_policy_changes(
    allow_case: PreparedCase,
) -> None:
    _set_adapters(allow_case.repo, {"enabled": True, "mode": "inspect-status-only"})
    params = plan.evaluate_params(allow_case)
    async with bridge(allow_case, "legacy") as (client, _):
        status = await send(client, "asp/host/status")
        assert status["hostResult"]["host"]["name"] == "asp-reference-host"
        assert not (await client.call_tool("asp_capabilities", {})).is_error
        with pytest.raises(MCPError) as caught:
            await send(client, "asp/host/evaluateChangeset", params)
        assert "inspect-status-only" in caught.value.message
        with pytest.raises(MCPError):
            await send(client, "asp/host/requestEditPlan", plan.edit_plan_params(allow_case))
        tool = await client.call_tool(
            "asp_ext_request_edit_plan", {"operation": "x", "paths": ["a"]}
        )
        assert (
            tool.is_error and "inspect-status-only" in tool.structured_content["error"]["message"]
        )
        # A new policy in HEAD: the host's policyDigest changes and the bridge re-reads it.
        _set_adapters(allow_case.repo, {"enabled": True, "mode": "mcp-extension-candidate"})
        fresh = dict(params, changeset=dict(params["changeset"]))
        fresh["changeset"]["baseline"] = {
            "rev": "git:tree:"
            + subprocess.run(
                ["git", "rev-parse", "HEAD^{tree}"],
                cwd=allow_case.repo,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        }
        envelope = await send(client, "asp/host/evaluateChangeset", fresh)
        assert envelope["hostResult"]["decision"] == "allow"
        try:  # the edit plan now gets the host's own answer, not the policy's refusal
            await send(client, "asp/host/requestEditPlan", plan.edit_plan_params(allow_case))
        except MCPError as after:
            assert after.data["error"]["reason"] == "host-error", after.message


OLD_FINDING = {
    "code": "pyflakes/unused-import",
    "severity": "warning",
    "source": "pyflakes",
    "message": "'os' imported but unused",
    "location": {
        "path": "src/app.py",
        "range": {"start": {"line": 0, "char": 0}, "end": {"line": 0, "char": 0}},
    },
    "fingerprint": "sha256:" + "0" * 64,
}


async def test_inspect_status_only_refuses_the_evaluate_inside_an_ordinary_tool(
    allow_case: PreparedCase,
) -> None:
    """asp_migration_check's parity runs host/evaluateChangeset: the policy refuses it there too."""
    _set_adapters(allow_case.repo, {"enabled": True, "mode": "inspect-status-only"})
    async with bridge(allow_case, "legacy") as (client, _):
        result = await client.call_tool(
            "asp_migration_check",
            {"legacy": ["judge"], "findings": [OLD_FINDING], "changeset": allow_case.changeset},
        )
        envelope = assert_labelled(result, is_error=False)
        parity = envelope["bridgeResult"]["migrationCheck"]["parity"]
        assert parity["ran"] is False
        assert "inspect-status-only" in parity["reason"]
        trace = await client.call_tool("asp_debug_trace", {"limit": 100})
        methods = [e["method"] for e in assert_labelled(trace)["bridgeResult"]["entries"]]
        assert "host/status" in methods and "host/evaluateChangeset" not in methods


async def test_adapter_policy_is_honoured_without_the_extension(
    allow_case: PreparedCase,
) -> None:
    """`serve --no-extension` is still the MCP adapter: adapters.mcp.enabled false refuses it."""
    _set_adapters(allow_case.repo, {"enabled": False})
    server = create_server(case_settings(allow_case))
    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        for tool in ("asp_status", "asp_debug_host"):
            envelope = assert_labelled(await client.call_tool(tool, {}), is_error=True)
            assert envelope["error"]["reason"] == "refused"
            assert envelope["error"]["failClass"] == "policy"
            assert "adapters.mcp.enabled is false" in envelope["error"]["message"]


async def test_unknown_adapter_policy_fails_closed_for_evaluate_but_not_for_reads(
    tmp_path: Path,
) -> None:
    """A host that offers host/policy but cannot answer it: reads pass, evaluate never leaves."""
    from tests.support.mcp_helpers import bad_host_argv

    record = tmp_path / "reached.txt"
    host = list(bad_host_argv("policy-error", str(record)))
    server, _ = extension_server(BridgeSettings(repo=tmp_path, host=host, timeout=30))
    changeset = {"baseline": {"rev": "git:tree:0"}, "changes": []}
    async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
        status = assert_labelled(await client.call_tool("asp_status", {}), is_error=False)
        assert status["hostMethod"] == "host/status" and "host" in status["hostResult"]
        result = await client.call_tool("asp_ext_evaluate_changeset", {"changeset": changeset})
        envelope = assert_labelled(result, is_error=True, binding="mcp-extension")
    assert envelope["error"]["reason"] == "refused"
    assert "adapters.mcp policy is unknown" in envelope["error"]["message"]
    assert not record.exists(), "evaluate reached a host whose adapter policy is unknown"
