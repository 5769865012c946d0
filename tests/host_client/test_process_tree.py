"""Nothing the bridge started outlives it: a host that ignores stdin EOF and SIGTERM and forks a
child into its own session, and a real reference host whose trusted provider does the same, are
ended as whole trees when the host client closes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from host_client import HostClient, HostClientSettings
from tests.support.gitrepo import write_files
from tests.support.host_harness import running
from tests.support.host_scenarios import one_provider, prepare
from tests.support.mcp_helpers import settings_for

pytestmark = pytest.mark.anyio


async def _gone(*pids: int) -> bool:
    """SIGKILL is delivered asynchronously: wait (bounded) until none of *pids* runs any more."""
    with anyio.move_on_after(10):
        while any(running(p) for p in pids):
            await anyio.sleep(0.02)
    return not any(running(p) for p in pids)


async def _pids(pid_file: Path) -> list[int]:
    with anyio.fail_after(60):
        while not pid_file.is_file() or len(pid_file.read_text().split()) < 2:
            await anyio.sleep(0.05)
    return [int(p) for p in pid_file.read_text().split()]


async def test_a_stubborn_host_and_its_escaped_child_end_with_the_client(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    settings = settings_for(tmp_path, "stubborn", str(pid_file), exit_grace=0.3)
    async with HostClient(settings) as client:
        await client.call("host/status", {})
        host, child = await _pids(pid_file)
        assert host == client.pid and os.getpgid(child) != os.getpgid(host)  # escaped the group
    assert await _gone(host, child)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG")
async def test_a_providers_stubborn_child_ends_with_the_bridge(tmp_path: Path) -> None:
    pid_file = tmp_path / "provider-pids"
    repo, trusted, _ = prepare(tmp_path, one_provider("forks-child", pid_file=str(pid_file)))
    write_files(repo, {"src/app.py": "VALUE = 9\n"})
    argv = (sys.executable, "-m", "reference_host", "serve", "--repo", str(repo))
    env = {**os.environ, "ASP_HOST_TRUSTED_DIR": str(trusted)}
    settings = HostClientSettings(argv=argv, cwd=repo, env=env, timeout=60, exit_grace=0.5)
    async with HostClient(settings) as client:
        working = await client.call("host/workingChangeset", {})
        params = {"callSite": "interactive", "changeset": working["changeset"]}
        await client.call("host/evaluateChangeset", params)
        provider, child = await _pids(pid_file)
        assert running(provider) and running(child)
    assert await _gone(provider, child)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
async def test_what_a_crashed_host_orphans_is_ended_by_the_serving_bridge(tmp_path: Path) -> None:
    """`asp-mcp-bridge serve` is a child subreaper: a host that forks a child into its own session
    and then dies on its own leaves nothing behind, while the bridge keeps serving."""
    from mcp import Client, StdioServerParameters

    from tests.support.mcp_helpers import bad_host_command

    pid_file = tmp_path / "pids"
    host = bad_host_command("orphan", str(pid_file))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", "serve", "--repo", str(tmp_path), "--host", host],
        cwd=str(tmp_path),
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as client:
            first = await client.call_tool("asp_status", {})
            assert first.is_error  # the host died on the request
            host_pid, child = await _pids(pid_file)
            assert await _gone(host_pid, child)
            trace = await client.call_tool("asp_debug_trace", {})
            assert not trace.is_error
