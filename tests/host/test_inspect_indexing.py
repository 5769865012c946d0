"""An inspect index build that outlives request deadlines (reference_host/providers/pyindex/build.py,
sessions/inspect_session.py, sessions/supervisor.py) through the real host and provider.

The build is held deterministically with the provider's test-only `--hold-build-requests N`
setting (it starts only once N queries asked for it), so no test depends on how fast parsing is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from reference_host.inspect.query import query_inspect
from reference_host.providers import PYTHON_INSPECT, BuiltinProvider
from reference_host.trust.manifests import InstalledProvider, ServerManifest, builtin_manifest
from tests.host.test_inspect_host import RESULT, host, request
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo, snapshot_tree
from tests.support.inspect_sample import ROUND_CENTS, SAMPLE

pytestmark = pytest.mark.anyio
PROVIDER = PYTHON_INSPECT.id


def builtin_with(provider: BuiltinProvider, *options: str) -> dict[str, InstalledProvider]:
    """A built-in provider's trusted manifest with extra provider settings."""
    template = builtin_manifest(provider)
    assert template is not None
    raw = dict(template.raw)
    raw["entrypoint"] = {
        "transport": "stdio",
        "bin": sys.executable,
        "args": ["-m", provider.module, *options],
    }
    manifest = ServerManifest.model_validate(raw)
    return {provider.id: InstalledProvider(provider.id, "test", "valid", manifest, raw=raw)}


def inspect_with(*options: str) -> dict[str, InstalledProvider]:
    return builtin_with(PYTHON_INSPECT, *options)


def generated(modules: int) -> dict[str, str | bytes]:
    """SAMPLE plus *modules* generated modules, each calling `round_cents` once."""
    files: dict[str, str | bytes] = dict(SAMPLE)
    for n in range(modules):
        files[f"src/gen/mod_{n}.py"] = (
            f"from shop.money import round_cents\n\n\ndef f_{n}(v):\n    return round_cents(v)\n"
        )
    return files


def callers_of(result: dict[str, Any]) -> set[str]:
    (answer,) = result["data"]["results"]
    return {e["from"] for e in answer["result"]["edges"]}


@pytest.mark.needs_definitions
async def test_deadlines_hit_while_indexing_never_quarantine(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", generated(40))
    before = snapshot_tree(repo)
    async with host(repo, extra=inspect_with("--hold-build-requests", "5")) as ctx:
        baseline = ctx.workspace.state().baseline()
        session = await ctx.supervisor.session_for(PROVIDER, baseline, 30, family="inspect")
        assert session.process is not None
        pid = session.process.pid
        for _ in range(4):  # more timeouts than the quarantine threshold
            timed_out = await query_inspect(
                ctx, {**request("callers", symbol=ROUND_CENTS), "timeoutMs": 800}
            )
            assert_valid(timed_out, RESULT)
            (degraded,) = timed_out["coverage"]["degraded"]
            assert degraded["reason"] == "timed-out", degraded
            assert "indexing" in degraded["detail"] and "not counted" in degraded["detail"]
            assert timed_out["coverage"]["exhaustive"] is False
            assert timed_out["data"]["results"] == []
        record = ctx.supervisor.record(PROVIDER)
        assert record.failures == 0 and not record.quarantined
        # the held build is released by the fifth query; a patient query gets the whole answer
        done = await query_inspect(
            ctx, {**request("callers", symbol=ROUND_CENTS), "timeoutMs": 60_000}
        )
        assert_valid(done, RESULT)
        assert done["coverage"]["degraded"] == [] and done["coverage"]["exhaustive"] is True
        assert {f"src/gen/mod_{n}.py::f_{n}" for n in range(40)} <= callers_of(done)
        assert ctx.supervisor.record(PROVIDER).session is session and session.alive
        assert session.process.pid == pid
    assert snapshot_tree(repo) == before


@pytest.mark.needs_definitions
async def test_a_query_during_indexing_answers_at_once_with_progress(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", generated(30))
    settings = inspect_with("--index-wait-ms", "0", "--hold-build-requests", "2")
    async with host(repo, extra=settings) as ctx:
        first = await query_inspect(ctx, request("references", symbol=ROUND_CENTS))
        assert_valid(first, RESULT)
        (degraded,) = first["coverage"]["degraded"]
        assert degraded["reason"] == "incomplete"
        files = len([p for p in generated(30) if p.endswith(".py")])
        assert f"indexing: 0 of {files} Python files parsed" in degraded["detail"]
        assert first["coverage"]["exhaustive"] is False and first["data"]["results"] == []
        answered = None
        for _ in range(400):  # the second query released the build; poll until it is built
            again = await query_inspect(ctx, request("references", symbol=ROUND_CENTS))
            if again["coverage"]["exhaustive"]:
                answered = again
                break
            assert again["coverage"]["degraded"][0]["reason"] == "incomplete"
            await anyio.sleep(0.02)
        assert answered is not None, "the background build never finished"
        assert {f"src/gen/mod_{n}.py::f_{n}" for n in range(30)} <= callers_of(answered)
        record = ctx.supervisor.record(PROVIDER)
        assert record.failures == 0 and not record.quarantined


@pytest.mark.needs_definitions
async def test_symbols_of_one_file_answer_completely_while_the_index_builds(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", generated(30))
    settings = inspect_with("--index-wait-ms", "0", "--hold-build-requests", "1000")
    async with host(repo, extra=settings) as ctx:
        held = await query_inspect(ctx, request("references", symbol=ROUND_CENTS))
        assert held["coverage"]["degraded"][0]["reason"] == "incomplete"  # still indexing
        early = await query_inspect(ctx, request("symbols", query="src/shop/money.py"))
        assert_valid(early, RESULT)
        assert early["coverage"]["degraded"] == [] and early["coverage"]["exhaustive"] is True
        (answer,) = early["data"]["results"]
        ids = {n["id"] for n in answer["result"]["nodes"]}
        assert ids == {
            "src/shop/money.py",
            "src/shop/money.py::round_cents",
            "src/shop/money.py::Money",
            "src/shop/money.py::Money.__init__",
            "src/shop/money.py::Money.add",
        }
        module = next(n for n in answer["result"]["nodes"] if n["kind"] == "module")
        assert module["name"] == "shop.money"  # the module name of the whole tree (src layout)
        assert answer["result"]["data"]["indexedFiles"] == 1
        still = await query_inspect(ctx, request("symbols", query="round_cents"))
        assert still["coverage"]["exhaustive"] is False  # a name query needs the whole index
