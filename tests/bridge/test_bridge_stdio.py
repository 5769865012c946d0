"""End to end over stdio: the SDK client spawns `python -m bridge serve`, which spawns the host."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.gitrepo import make_repo
from tests.support.mcp_helpers import assert_labelled, bad_host_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # stdio end to end: real processes
MODES = ["legacy", "auto"]
HAS_REFERENCE_HOST = importlib.util.find_spec("reference_host.cli") is not None


def bridge_params(repo: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", "serve", "--repo", str(repo), *extra],
        env={**os.environ, "ASP_BRIDGE_BACKOFF_INITIAL": "0.01"},
        cwd=str(repo),
    )


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_bad_host_round_trip(tmp_path: Path, mode: str) -> None:
    params = bridge_params(tmp_path, "--host", bad_host_command("progress"))
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with anyio.fail_after(30):
        async with Client(params, mode=mode, read_timeout_seconds=20) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            core = {
                "asp_status",
                "asp_capabilities",
                "asp_authority_status",
                "asp_debug_host",
                "asp_debug_trace",
            }
            assert core <= names  # later work may add tools; the five core tools are always there
            result = await client.call_tool("asp_status", {}, progress_callback=on_progress)
            envelope = assert_labelled(result, is_error=False)
            assert envelope["hostResult"]["workspace"]["root"] == str(tmp_path.resolve())
            debug = assert_labelled(await client.call_tool("asp_debug_host", {}))["bridgeResult"]
            assert debug["state"] == "running"
    assert seen == [1, 2, 3, 4]  # the bridge's own message, then the host's three reports


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_cancellation_reaches_host(tmp_path: Path, mode: str) -> None:
    record = tmp_path / "cancels.jsonl"
    params = bridge_params(tmp_path, "--host", bad_host_command("record-cancel", str(record)))
    with anyio.fail_after(30):
        async with Client(params, mode=mode, read_timeout_seconds=20) as client:
            await client.call_tool("asp_debug_host", {})  # the bridge is up
            with anyio.move_on_after(1.0):
                await client.call_tool("asp_authority_status", {})
            while not record.exists():
                await anyio.sleep(0.05)
            while "host/authority/status" not in record.read_text():
                await anyio.sleep(0.05)
            cancels = [json.loads(line) for line in record.read_text().splitlines()]
            assert "host/authority/status" in [c["for"] for c in cancels]
            entries = (await client.call_tool("asp_debug_trace", {})).structured_content[
                "bridgeResult"
            ]["entries"]
            [entry] = [e for e in entries if e["origin"] == "asp_authority_status"]
            assert entry["cancelSent"] is True and entry["outcome"] == "cancelled"


async def test_stdio_exit_during_fifty_calls_fails_fast_then_recovers(tmp_path: Path) -> None:
    once = tmp_path / "exited-once"
    params = bridge_params(
        tmp_path,
        "--timeout",
        "30",
        "--host",
        bad_host_command("exit-after", "50", "--once-file", str(once)),
    )
    results = []
    with anyio.fail_after(40):
        async with Client(params, mode="legacy", read_timeout_seconds=35) as client:

            async def one() -> None:
                results.append(await client.call_tool("asp_status", {}))

            started = anyio.current_time()
            async with anyio.create_task_group() as tg:
                for _ in range(50):
                    tg.start_soon(one)
            assert anyio.current_time() - started < 15
            reasons = {assert_labelled(r, is_error=True)["error"]["reason"] for r in results}
            assert reasons == {"host-unavailable"}
            assert {r.structured_content["error"]["exitCode"] for r in results} == {3}
            recovered = await client.call_tool("asp_status", {})
            assert (
                assert_labelled(recovered, is_error=False)["hostResult"]["host"]["name"]
                == "bad-host"
            )


async def test_stdio_ten_megabytes_of_stderr(tmp_path: Path) -> None:
    params = bridge_params(tmp_path, "--host", bad_host_command("stderr-flood", "10"))
    with anyio.fail_after(40):
        async with Client(params, mode="legacy", read_timeout_seconds=35) as client:
            assert_labelled(await client.call_tool("asp_capabilities", {}), is_error=False)
            debug = (await client.call_tool("asp_debug_host", {})).structured_content[
                "bridgeResult"
            ]
            assert debug["stderrBytesTotal"] >= 10 * 1024 * 1024


@pytest.mark.skipif(
    not HAS_REFERENCE_HOST, reason="the reference host (reference_host.cli) has not landed"
)
@pytest.mark.parametrize("mode", MODES)
async def test_stdio_against_the_reference_host(tmp_path: Path, mode: str) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "print('hello')\n"})
    params = bridge_params(repo)  # default host: this installation's reference host
    with anyio.fail_after(60):
        async with Client(params, mode=mode, read_timeout_seconds=50) as client:
            for name, method in (
                ("asp_status", "host/status"),
                ("asp_capabilities", "host/capabilities"),
                ("asp_authority_status", "host/authority/status"),
            ):
                result = await client.call_tool(name, {})
                envelope = assert_labelled(result, is_error=False)
                assert envelope["hostMethod"] == method
                assert envelope["hostResult"]["receipt"]["trustArtifact"] is False
            status = (await client.call_tool("asp_status", {})).structured_content
            assert status["hostResult"]["workspace"]["root"] == str(repo.resolve())
            assert status["host"]["name"] == status["hostResult"]["host"]["name"]
