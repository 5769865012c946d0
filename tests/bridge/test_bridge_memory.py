"""The bridge in memory (`Client(server)`), in both protocol eras, against real bad-host processes."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent

from bridge.config import BridgeSettings
from bridge.label import Envelope
from bridge.server import create_server
from bridge.tools import ToolSpec, runtime
from tests.support.mcp_helpers import LABEL_KEY, assert_labelled, bad_host_argv

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]  # 2025-11-25 handshake, and the modern 2026-07-28 path
TOOLS = [
    "asp_status",
    "asp_capabilities",
    "asp_authority_status",
    "asp_debug_host",
    "asp_debug_trace",
]
HOST_TOOLS = {
    "asp_status": "host/status",
    "asp_capabilities": "host/capabilities",
    "asp_authority_status": "host/authority/status",
}


def _settings(tmp_path: Path, *mode: str, **kw: Any) -> BridgeSettings:
    values: dict[str, Any] = {"timeout": 10.0, "backoff_initial": 0.01, "backoff_max": 0.05}
    values.update(kw)
    return BridgeSettings(repo=tmp_path, host=list(bad_host_argv(*mode)), **values)


@asynccontextmanager
async def connect(settings: BridgeSettings, mode: str, **kw: Any) -> AsyncIterator[Client]:
    async with Client(create_server(settings, **kw), mode=mode) as client:  # type: ignore[arg-type]
        yield client


async def _probe(ctx: Context, n: int) -> Annotated[CallToolResult, Envelope]:
    """A later-added tool: forwards host/status with its own params through the one forwarding path."""
    return await runtime(ctx).forward(
        ctx, tool="asp_test_probe", method="host/status", params={"probe": n}
    )


async def _sneaky_gate(ctx: Context) -> Annotated[CallToolResult, Envelope]:
    """A careless later tool that tries a gate call-site: the central guard must refuse it."""
    return await runtime(ctx).forward(
        ctx,
        tool="asp_test_gate",
        method="host/evaluateChangeset",
        params={"callSite": "gate", "changeset": {}},
    )


async def _unlabelled(ctx: Context) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="pass: true")])


EXTRA = (
    ToolSpec("asp_test_probe", "probe", "test probe", _probe, "host/status"),
    ToolSpec("asp_test_gate", "gate attempt", "test gate", _sneaky_gate, "host/evaluateChangeset"),
    ToolSpec("asp_test_unlabelled", "unlabelled", "test unlabelled", _unlabelled),
)


@pytest.mark.parametrize("mode", MODES)
async def test_tools_are_listed_read_only_with_schemas(tmp_path: Path, mode: str) -> None:
    async with connect(_settings(tmp_path, "ok"), mode) as client:
        assert "NON-AUTHORITATIVE" in (client.instructions or "")
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(TOOLS) <= set(tools)  # later work adds tools; the core five are always there
        for tool in tools.values():
            assert re.fullmatch(r"[a-z0-9_]{1,40}", tool.name)
            hints = tool.annotations
            assert hints is not None
            assert (hints.read_only_hint, hints.destructive_hint) == (True, False)
            assert (hints.idempotent_hint, hints.open_world_hint) == (True, False)
            assert tool.output_schema is not None
            assert (
                "nonAuthoritative" in tool.output_schema["required"]
                or "nonAuthoritative" in tool.output_schema["properties"]
            )
            assert "NON-AUTHORITATIVE" in (tool.description or "")
            assert tool.meta is not None and tool.meta[LABEL_KEY]["gateEligible"] is False


@pytest.mark.parametrize("mode", MODES)
async def test_every_tool_result_is_labelled(tmp_path: Path, mode: str) -> None:
    async with connect(_settings(tmp_path, "echo-params"), mode) as client:
        for name in TOOLS:
            result = await client.call_tool(name, {})
            envelope = assert_labelled(result, is_error=False)
            assert envelope["tool"] == name
            if name in HOST_TOOLS:
                assert envelope["hostMethod"] == HOST_TOOLS[name]
                assert envelope["callSite"] == "interactive"
                host_result = envelope["hostResult"]
                assert host_result["receipt"]["host"]["name"] == "bad-host"
                assert host_result["echo"]["method"] == HOST_TOOLS[name]
                assert (
                    host_result["echo"]["params"] is None
                )  # status tools send no params, so no gate
                assert envelope["host"]["name"] == "bad-host"
                assert envelope["host"]["command"][-3:] == [
                    "serve",
                    "--repo",
                    str(tmp_path.resolve()),
                ]
                assert "pass" not in envelope and "decision" not in envelope
            else:
                assert envelope["hostMethod"] is None and envelope["bridgeResult"] is not None


@pytest.mark.parametrize("mode", MODES)
async def test_debug_tools_show_host_and_redacted_trace(tmp_path: Path, mode: str) -> None:
    async with connect(_settings(tmp_path, "ok"), mode) as client:
        status = await client.call_tool("asp_status", {})
        receipt_id = status.structured_content["hostResult"]["receipt"]["receiptId"]
        debug = assert_labelled(await client.call_tool("asp_debug_host", {}))["bridgeResult"]
        assert debug["state"] == "running" and isinstance(debug["pid"], int)
        assert debug["latency"]["host/status"]["count"] == 1
        assert debug["command"][0].endswith("python") or "python" in debug["command"][0]
        trace = assert_labelled(await client.call_tool("asp_debug_trace", {"limit": 5}))[
            "bridgeResult"
        ]
        # the first tools/list also read host/policy and host/capabilities (bridge/listing.py)
        mine = [e for e in trace["entries"] if e["origin"] == "asp_status"]
        assert [e["method"] for e in mine] == ["host/status"] and mine[0]["responseBytes"] > 0
        assert receipt_id not in json.dumps(trace)  # payloads are never recorded


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("host_mode", "kw", "reason"),
    [
        (("crash-mid-call",), {}, "host-unavailable"),
        (("hang",), {"timeout": 0.3}, "timeout"),
        (("malformed-reply",), {}, "host-protocol-error"),
        (("garbage-stdout", "--no-reply"), {"timeout": 0.3}, "timeout"),
        (("ok",), {"max_result_bytes": 1024}, "host-protocol-error"),
    ],
)
async def test_faults_are_labelled_errors(
    tmp_path: Path, mode: str, host_mode: tuple[str, ...], kw: dict[str, Any], reason: str
) -> None:
    async with connect(_settings(tmp_path, *host_mode, **kw), mode) as client:
        result = await client.call_tool("asp_status", {})
        envelope = assert_labelled(result, is_error=True)
        assert envelope["error"]["reason"] == reason
        assert envelope["hostResult"] is None
        if reason == "host-unavailable":
            assert envelope["error"]["exitCode"] == 7
            assert "simulated crash" in envelope["error"]["stderrTail"]
            assert "simulated crash" in result.content[0].text  # fenced stderr tail in the text


async def test_missing_executable_is_host_unavailable(tmp_path: Path) -> None:
    settings = BridgeSettings(
        repo=tmp_path, host=[str(tmp_path / "nope")], max_failed_starts=2, backoff_initial=0.01
    )
    async with connect(settings, "legacy") as client:
        result = await client.call_tool("asp_capabilities", {})
        envelope = assert_labelled(result, is_error=True)
        assert envelope["error"]["reason"] == "host-unavailable"
        assert "cannot start host" in envelope["error"]["message"]
        debug = (await client.call_tool("asp_debug_host", {})).structured_content["bridgeResult"]
        assert debug["state"] == "down" and "consecutive failed starts" in debug["downReason"]


@pytest.mark.parametrize("mode", MODES)
async def test_no_tool_can_send_gate(tmp_path: Path, mode: str) -> None:
    async with connect(_settings(tmp_path, "echo-params"), mode, extra_tools=EXTRA) as client:
        result = await client.call_tool("asp_test_gate", {})
        envelope = assert_labelled(result, is_error=True)
        assert (
            envelope["error"]["reason"] == "refused"
            and "interactive or sweep" in envelope["error"]["message"]
        )
        trace = (await client.call_tool("asp_debug_trace", {})).structured_content["bridgeResult"]
        # refused before anything reached the host (tools/list's own reads aside)
        assert [e for e in trace["entries"] if e["origin"] == "asp_test_gate"] == []


@pytest.mark.parametrize("mode", MODES)
async def test_unlabelled_and_invalid_calls_still_come_back_labelled(
    tmp_path: Path, mode: str
) -> None:
    async with connect(_settings(tmp_path, "ok"), mode, extra_tools=EXTRA) as client:
        withheld = assert_labelled(await client.call_tool("asp_test_unlabelled", {}), is_error=True)
        assert withheld["error"]["reason"] == "refused"
        bad_args = assert_labelled(
            await client.call_tool("asp_debug_trace", {"limit": "x"}), is_error=True
        )
        assert bad_args["error"]["reason"] == "refused"


@pytest.mark.parametrize("mode", MODES)
async def test_fifty_concurrent_calls_are_not_crossed(tmp_path: Path, mode: str) -> None:
    results: dict[int, CallToolResult] = {}
    async with connect(_settings(tmp_path, "echo-params"), mode, extra_tools=EXTRA) as client:

        async def one(n: int) -> None:
            results[n] = await client.call_tool("asp_test_probe", {"n": n})

        async with anyio.create_task_group() as tg:
            for n in range(50):
                tg.start_soon(one, n)
        for n, result in results.items():
            assert assert_labelled(result, is_error=False)["hostResult"]["echo"]["params"] == {
                "probe": n
            }
        ids = {r.structured_content["hostResult"]["echo"]["id"] for r in results.values()}
        assert len(ids) == 50


@pytest.mark.parametrize("mode", MODES)
async def test_host_progress_becomes_mcp_progress(tmp_path: Path, mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect(_settings(tmp_path, "progress"), mode) as client:
        result = await client.call_tool("asp_status", {}, progress_callback=on_progress)
        assert_labelled(result, is_error=False)
    # one counter per request: the bridge's own readable message first, then the host's three
    assert [p for p, _, _ in seen] == [1, 2, 3, 4]
    assert seen[0][2] == "asp_status: asking the ASP host (host/status, call-site interactive)"
    assert all(m and m.startswith("host progress (untrusted): step") for _, _, m in seen[1:])


async def test_cancellation_reaches_the_host(tmp_path: Path) -> None:
    """Legacy in-memory carries client notifications (modern in-memory does not): MCP cancel → $/cancelRequest."""
    record = tmp_path / "cancels.jsonl"
    async with connect(_settings(tmp_path, "record-cancel", str(record)), "legacy") as client:
        # the first tools/list waits (bounded) for its own reads of this never-answering host
        await client.list_tools()
        with anyio.move_on_after(0.5):
            await client.call_tool("asp_status", {})
        with anyio.fail_after(5):
            while not record.exists() or "host/status" not in record.read_text():
                await anyio.sleep(0.02)
        cancels = [json.loads(line) for line in record.read_text().splitlines()]
        [cancel] = [c for c in cancels if c["for"] == "host/status"]
        assert cancel["method"] == "$/cancelRequest"
        trace = (await client.call_tool("asp_debug_trace", {})).structured_content["bridgeResult"]
        entry = next(e for e in trace["entries"] if e["method"] == "host/status")
        assert entry["outcome"] == "cancelled" and entry["cancelSent"] is True
        assert entry["requestId"] == cancel["id"]
