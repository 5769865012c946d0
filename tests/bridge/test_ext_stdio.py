"""The extension over stdio: a real `python -m bridge serve` subprocess and a real SDK client, both eras."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from asp_protocol.canonical import request_digest
from bridge.ext import EXTENSION_ID
from bridge.ext.bakeoff import plan
from bridge.ext.bakeoff.workspace import PreparedCase, snapshot
from bridge.ext.extension import APPLY_METHOD
from tests.support.ext_bridge import cancel_an_evaluate, prepared_case, send
from tests.support.mcp_helpers import assert_labelled

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # stdio end to end: real processes
MODES = ["legacy", "auto"]


@asynccontextmanager
async def bridge(prepared: PreparedCase, mode: str, *flags: str) -> AsyncIterator[Client]:
    host = shlex.join(plan.host_argv(plan.DEFAULT_HOST, prepared, keep_repo_placeholder=True))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", "serve", "--repo", str(prepared.repo), "--host", host, *flags],
        env=dict(os.environ),
        cwd=str(prepared.repo),
    )
    async with Client(params, mode=mode, read_timeout_seconds=40) as client:  # type: ignore[arg-type]
        yield client


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_extension_round_trip(tmp_path: Path, mode: str) -> None:
    """Advertisement, every forwarded read, gate preserved, apply refused, progress, nothing written."""
    prepared = prepared_case(tmp_path, "slow-progress")
    before = snapshot(prepared.repo)
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with bridge(prepared, mode) as client:
        caps = client.server_capabilities
        assert caps is not None
        assert caps.experimental and EXTENSION_ID in caps.experimental
        assert caps.extensions and EXTENSION_ID in caps.extensions
        assert caps.experimental[EXTENSION_ID]["gateEligible"] is False

        for method in ("host/status", "host/capabilities", "host/authority/status"):
            envelope = await send(client, "asp/" + method)
            assert envelope["authority"]["binding"] == "mcp-extension"
            assert envelope["authority"]["gateSatisfied"] is False
            assert envelope["hostResult"]["receipt"]["host"]["name"] == "asp-reference-host"

        params = plan.evaluate_params(prepared)
        assert params["callSite"] == "gate"
        envelope = await send(
            client, "asp/host/evaluateChangeset", params, progress_callback=on_progress
        )
        result = envelope["hostResult"]
        assert envelope["callSite"] == result["callSite"] == "gate"
        assert result["requestDigest"] == request_digest("host/evaluateChangeset", params)
        assert result["decision"] == "allow"
        assert envelope["authority"]["gateSatisfied"] is False
        assert len(progress) >= 3

        with pytest.raises(MCPError) as caught:
            await send(
                client, APPLY_METHOD, {"callSite": "gate", "proposalId": "p", "intent": "user"}
            )
        assert caught.value.code == -32012
        assert caught.value.data["error"]["reason"] == "refused"

        with pytest.raises(MCPError) as missing:
            await send(client, "asp/check/evaluate", params)
        assert missing.value.code == -32601  # provider methods are not offered at all
    assert snapshot(prepared.repo) == before


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_cancellation_reaches_the_host(tmp_path: Path, mode: str) -> None:
    prepared = prepared_case(tmp_path, "hang", "--hang-seconds", "60")
    async with bridge(prepared, mode) as client:
        await cancel_an_evaluate(client, prepared)
        entry: dict[str, Any] = {}
        with anyio.fail_after(10):
            while not entry.get("lateReply"):
                await anyio.sleep(0.05)
                trace = assert_labelled(await client.call_tool("asp_debug_trace", {"limit": 20}))
                found = [
                    e
                    for e in trace["bridgeResult"]["entries"]
                    if e["method"] == "host/evaluateChangeset"
                ]
                entry = found[-1] if found else {}
        assert entry["origin"].startswith("asp/host/evaluateChangeset#")
        assert entry["callSite"] == "gate"
        assert entry["outcome"] == "cancelled"
        assert entry["cancelSent"] is True
        assert entry["lateReply"] == "error"  # the host's -32016 for the cancelled evaluate


async def test_stdio_extension_can_be_switched_off(tmp_path: Path) -> None:
    prepared = prepared_case(tmp_path, "clean")
    async with bridge(prepared, "legacy", "--no-extension") as client:
        caps = client.server_capabilities
        assert caps is not None
        assert EXTENSION_ID not in (caps.experimental or {})
        names = {t.name for t in (await client.list_tools()).tools}
        assert not any(n.startswith("asp_ext_") for n in names)
        with pytest.raises(MCPError) as caught:
            await send(client, "asp/host/status")
        assert caught.value.code == -32601
