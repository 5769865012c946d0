"""Listed ⇔ callable: under every `adapters.mcp` mode each listed tool can be called without a policy
refusal and each hidden one would be refused; edit-plan follows the host's edit capability; a
policy change sends `notifications/tools/list_changed` (legacy) or a listen event (2026-07-28);
the `tools` allow-list exposes fewer tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ToolListChangedNotification

from bridge.config import BridgeSettings, ConfigError, load_settings
from bridge.server import create_server
from tests.support.ext_bridge import extension_server
from tests.support.mcp_helpers import assert_labelled, bad_host_argv

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
CHANGESET = {"baseline": {"rev": "git:tree:" + "0" * 40}, "changes": []}
ARGUMENTS: dict[str, dict[str, Any]] = {
    "asp_status": {},
    "asp_capabilities": {},
    "asp_authority_status": {},
    "asp_inspect": {"verb": "symbols"},
    "asp_migration_check": {"legacy": ["judge"]},
    "asp_debug_host": {},
    "asp_debug_trace": {},
    "asp_ext_evaluate_changeset": {"changeset": CHANGESET},
    "asp_ext_request_edit_plan": {
        "operation": "rename",
        "paths": ["a.py"],
        "baseline": {"rev": "git:tree:" + "0" * 40},
    },
}
ALL = set(ARGUMENTS)
ADAPTER_MODES: list[tuple[dict[str, Any] | None, bool, set[str]]] = [
    (None, True, ALL),
    ({"mode": "full-outer-seam"}, False, ALL - {"asp_ext_request_edit_plan"}),
    ({"mode": "mcp-extension-candidate"}, True, ALL),
    (
        {"mode": "inspect-status-only"},
        True,
        ALL - {"asp_ext_evaluate_changeset", "asp_ext_request_edit_plan"},
    ),
    ({"enabled": False}, True, set()),
]


def _policy_file(tmp_path: Path, mcp: dict[str, Any] | None, edit: bool, digest: str) -> Path:
    path = tmp_path / "policy-state.json"
    path.write_text(json.dumps({"mcp": mcp, "digest": digest, "edit": edit}), encoding="utf-8")
    return path


def _server(tmp_path: Path, state: Path, **settings: Any) -> Any:
    values = {"timeout": 10.0, "backoff_initial": 0.01, **settings}
    host = list(bad_host_argv("adapters", str(state)))
    return extension_server(BridgeSettings(repo=tmp_path, host=host, **values))[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("mcp", "edit", "expected"), ADAPTER_MODES)
async def test_every_listed_tool_is_callable_and_every_hidden_one_refused(
    tmp_path: Path, mode: str, mcp: dict[str, Any] | None, edit: bool, expected: set[str]
) -> None:
    state = _policy_file(tmp_path, mcp, edit, "sha256:" + "1" * 64)
    async with Client(_server(tmp_path, state), mode=mode) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == expected
        for name, arguments in ARGUMENTS.items():
            envelope = assert_labelled(
                await client.call_tool(name, arguments),
                binding="mcp-extension" if name.startswith("asp_ext_") else "mcp-tool",
            )
            refused_by_policy = (envelope.get("error") or {}).get("failClass") == "policy"
            if name in listed:
                assert not refused_by_policy, (name, envelope["error"])
            elif edit or name != "asp_ext_request_edit_plan":  # hidden by the policy itself
                assert refused_by_policy, name


async def test_a_policy_change_sends_tools_list_changed_on_the_legacy_session(
    tmp_path: Path,
) -> None:
    state = _policy_file(tmp_path, None, True, "sha256:" + "1" * 64)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    async with Client(
        _server(tmp_path, state), mode="legacy", message_handler=on_message
    ) as client:
        assert client.server_capabilities.tools.list_changed is True  # type: ignore[union-attr]
        assert "asp_ext_evaluate_changeset" in {t.name for t in (await client.list_tools()).tools}
        _policy_file(tmp_path, {"mode": "inspect-status-only"}, True, "sha256:" + "2" * 64)
        await client.call_tool("asp_status", {})  # its policyDigest differs: the policy is re-read
        with anyio.fail_after(10):
            await changed.wait()
        names = {t.name for t in (await client.list_tools()).tools}
    assert "asp_ext_evaluate_changeset" not in names and "asp_status" in names


async def test_a_policy_change_reaches_a_2026_listener(tmp_path: Path) -> None:
    state = _policy_file(tmp_path, None, True, "sha256:" + "1" * 64)
    async with Client(_server(tmp_path, state), mode="auto") as client:
        assert client.server_capabilities.tools.list_changed is True  # type: ignore[union-attr]
        assert "asp_ext_request_edit_plan" in {t.name for t in (await client.list_tools()).tools}
        async with client.listen(tools_list_changed=True) as subscription:
            _policy_file(tmp_path, {"enabled": False}, True, "sha256:" + "3" * 64)
            await client.call_tool("asp_status", {})
            with anyio.fail_after(10):
                async for _event in subscription:
                    break
        assert (await client.list_tools()).tools == []


async def test_the_tools_allow_list_exposes_fewer_tools(tmp_path: Path) -> None:
    state = _policy_file(tmp_path, None, True, "sha256:" + "1" * 64)
    server = _server(tmp_path, state, tools=["asp_status", "asp_inspect"])
    async with Client(server, mode="legacy") as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"asp_status", "asp_inspect"}
        hidden = assert_labelled(await client.call_tool("asp_debug_host", {}), is_error=True)
        assert hidden["error"]["message"].startswith("unknown tool `asp_debug_host`")
    assert load_settings(environ={"ASP_BRIDGE_TOOLS": "asp_status, asp_inspect"}).tools == [
        "asp_status",
        "asp_inspect",
    ]
    with pytest.raises(ConfigError, match="unknown tool 'asp_stat'"):
        _server(tmp_path, state, tools=["asp_stat"])


@pytest.mark.slow  # the bridge's shutdown waits out the stuck host's exit grace
@pytest.mark.parametrize("mode", MODES)
async def test_initialize_answers_while_the_host_is_still_starting(
    tmp_path: Path, mode: str
) -> None:
    """The host starts in the background: a host that never reads its input does not hold up
    initialize, and the first tools/list waits for it only briefly (bounded), then lists."""
    slow = [sys.executable, "-c", "import time; time.sleep(60)"]
    settings = BridgeSettings(repo=tmp_path, host=slow, timeout=5.0)
    with anyio.fail_after(20):  # a hang guard, not a timing assertion
        async with Client(create_server(settings), mode=mode) as client:  # type: ignore[arg-type]
            assert client.server_info is not None
            names = {tool.name for tool in (await client.list_tools()).tools}
    assert "asp_status" in names
