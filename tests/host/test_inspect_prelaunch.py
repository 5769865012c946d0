"""The inspect provider starts while the host reads the work tree (inspect/query.py,
sessions/supervisor.py `prelaunch`), through the real host and the real provider process.

A first query launches the provider before `git status` and the snapshot, so its start-up
overlaps them; `initialize` still carries the snapshot's baseline. A started process that the
query does not use, or that died while it waited, never serves and never idles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from reference_host.inspect.query import query_inspect
from reference_host.providers import PYTHON_INSPECT
from tests.host.test_inspect_host import RESULT, fake_inspect, host, request
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo
from tests.support.inspect_sample import ROUND_CENTS, SAMPLE

pytestmark = pytest.mark.anyio
PROVIDER = PYTHON_INSPECT.id


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", SAMPLE)


@pytest.mark.needs_definitions
async def test_the_provider_is_running_before_the_work_tree_is_read(repo: Path) -> None:
    async with host(repo) as ctx:
        seen: list[int | None] = []
        original = ctx.workspace.state

        def state() -> Any:
            waiting = ctx.supervisor.record(PROVIDER).spawned.get("inspect")
            seen.append(waiting.process.pid if waiting and waiting.process else None)
            return original()

        ctx.workspace.state = state  # type: ignore[method-assign]
        result = await query_inspect(ctx, request("callers", symbol=ROUND_CENTS))
        assert_valid(result, RESULT)
        assert result["coverage"]["exhaustive"] is True
        session = ctx.supervisor.record(PROVIDER).sessions["inspect"]
        assert session.process is not None and seen == [session.process.pid]  # the same process
        assert session.baseline == ctx.workspace.state().baseline()
        assert ctx.supervisor.record(PROVIDER).spawned == {}
        again = await query_inspect(ctx, request("callers", symbol=ROUND_CENTS))
        assert ctx.supervisor.record(PROVIDER).sessions["inspect"] is session  # warm: no launch
        assert again["data"] == result["data"]


@pytest.mark.needs_definitions
async def test_a_started_provider_that_died_waiting_is_replaced_not_counted(repo: Path) -> None:
    async with host(repo) as ctx:
        await ctx.supervisor.prelaunch(PROVIDER, "inspect")
        waiting = ctx.supervisor.record(PROVIDER).spawned["inspect"]
        await waiting.kill()
        with anyio.fail_after(10):
            await waiting.exited.wait()
        result = await query_inspect(ctx, request("callers", symbol=ROUND_CENTS))
        assert result["coverage"]["exhaustive"] is True
        record = ctx.supervisor.record(PROVIDER)
        assert record.sessions["inspect"] is not waiting and record.failures == 0


@pytest.mark.needs_definitions
async def test_a_started_provider_the_query_does_not_ask_is_stopped(repo: Path) -> None:
    extra = {"fake-inspect": fake_inspect("clean")}
    async with host(repo, extra) as ctx:
        await ctx.supervisor.prelaunch(PROVIDER, "inspect")  # not trusted here: not started
        assert ctx.supervisor.record(PROVIDER).spawned == {}
        ctx.providers["other-inspect"] = fake_inspect("clean", "other-inspect")
        await ctx.supervisor.prelaunch("other-inspect", "inspect")
        waiting = ctx.supervisor.record("other-inspect").spawned["inspect"]
        del ctx.providers["other-inspect"]  # the query's targets no longer include it
        await query_inspect(ctx, request("callers", symbol=ROUND_CENTS))
        assert ctx.supervisor.record("other-inspect").spawned == {}
        with anyio.fail_after(10):
            await waiting.exited.wait()
        assert ctx.supervisor.record("fake-inspect").launched  # the one the query asked


@pytest.mark.needs_definitions
async def test_shutdown_stops_a_provider_started_ahead(repo: Path) -> None:
    async with host(repo) as ctx:
        await ctx.supervisor.prelaunch(PROVIDER, "inspect")
        waiting = ctx.supervisor.record(PROVIDER).spawned["inspect"]
        await ctx.supervisor.shutdown_all()
        with anyio.fail_after(10):
            await waiting.exited.wait()
        assert ctx.supervisor.record(PROVIDER).spawned == {}
