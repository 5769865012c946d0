"""The inspect provider's persistent facts cache through the real host and provider processes:
a restarted provider answers from the cache, a changed blob is parsed again, the cache lives in the
user's cache directory (never the workspace, which stays byte-identical), and the built-in
manifest declares it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from reference_host.context import HostContext
from reference_host.inspect.query import query_inspect
from reference_host.providers import PYTHON_INSPECT
from reference_host.trust.cache_dirs import CACHE_ENV
from reference_host.trust.manifests import builtin_manifest
from tests.host.test_inspect_host import RESULT, host, request
from tests.host.test_inspect_indexing import callers_of, generated
from tests.support.definitions import assert_valid
from tests.support.gitrepo import git, make_repo, snapshot_tree, write_files
from tests.support.inspect_sample import ROUND_CENTS

pytestmark = pytest.mark.anyio
MODULES = 20


async def whole_answer(ctx: HostContext) -> dict[str, Any]:
    """The callers of round_cents once the index is built (the build may outlast one query)."""
    for _ in range(600):
        result = await query_inspect(
            ctx, {**request("callers", symbol=ROUND_CENTS), "timeoutMs": 30_000}
        )
        assert_valid(result, RESULT)
        if result["coverage"]["exhaustive"]:
            return result
        await anyio.sleep(0.05)
    raise AssertionError("the index was never built")


def graph_data(result: dict[str, Any]) -> dict[str, Any]:
    (answer,) = result["data"]["results"]
    data: dict[str, Any] = answer["result"]["data"]
    return data


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user cache directory this test's providers use, outside the workspace."""
    where = tmp_path / "user-cache" / "asp-bridge"
    monkeypatch.setenv(CACHE_ENV, str(where))
    return where


FACT_ENTRIES = "*/facts-*/??/*.facts"
INDEX_ENTRIES = "*/index-*/*.index"


async def entries_settle(cache: Path, count: int, pattern: str = FACT_ENTRIES) -> int:
    """The number of cache entries matching *pattern* once the provider has written *count* (it
    writes behind its answers, in its own process, so the test polls the directory)."""
    found = 0
    for _ in range(600):
        found = len(list(cache.glob(pattern)))
        if found >= count:
            return found
        await anyio.sleep(0.05)
    return found


@pytest.mark.needs_definitions
async def test_a_restarted_provider_answers_from_the_cache_and_reparses_changed_blobs(
    tmp_path: Path, cache: Path
) -> None:
    repo = make_repo(tmp_path / "repo", generated(MODULES))
    before = snapshot_tree(repo)
    files = len([p for p in generated(MODULES) if p.endswith(".py")])

    async with host(repo) as ctx:
        first = await whole_answer(ctx)
        assert graph_data(first)["factsFromCache"] == 0
        assert await entries_settle(cache, files) == files
    async with host(repo) as ctx:  # a new host and a new provider process
        second = await whole_answer(ctx)
        assert graph_data(second)["factsFromCache"] == files
        assert callers_of(second) == callers_of(first)
        assert {f"src/gen/mod_{n}.py::f_{n}" for n in range(MODULES)} <= callers_of(second)

    write_files(repo, {"src/gen/mod_0.py": "def f_0(v):\n    return v\n"})
    git(repo, "commit", "-qam", "mod_0 no longer rounds")
    changed = snapshot_tree(repo)
    async with host(repo) as ctx:
        third = await whole_answer(ctx)
        assert graph_data(third)["factsFromCache"] == files - 1  # only the new blob parsed
        assert "src/gen/mod_0.py::f_0" not in callers_of(third)
        assert "src/gen/mod_1.py::f_1" in callers_of(third)
    assert await entries_settle(cache, files + 1) == files + 1
    assert snapshot_tree(repo) == changed and set(before) == set(changed)
    assert not any(p.startswith(".cache") for p in changed)


def test_the_builtin_manifest_declares_the_cache_and_never_offers_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    installed = builtin_manifest(PYTHON_INSPECT, repo)
    assert installed is not None and installed.manifest is not None
    where = str(tmp_path / "cache" / PYTHON_INSPECT.id)
    assert installed.argv()[-2:] == ["--cache-dir", where]
    assert installed.manifest.access_expectations.filesystem.write == [f"user-cache:{where}"]
    assert not installed.declares_write  # its own cache outside the workspace: launchable

    monkeypatch.setenv(CACHE_ENV, str(repo / ".cache"))  # inside the workspace: no cache at all
    inside = builtin_manifest(PYTHON_INSPECT, repo)
    assert inside is not None and inside.manifest is not None
    assert "--cache-dir" not in inside.argv()
    assert inside.manifest.access_expectations.filesystem.write == []
    monkeypatch.setenv(CACHE_ENV, "off")
    off = builtin_manifest(PYTHON_INSPECT, repo)
    assert off is not None and "--cache-dir" not in off.argv()


@pytest.mark.needs_definitions
async def test_a_restarted_provider_reuses_the_resolved_index_only_for_the_same_tree(
    tmp_path: Path, cache: Path
) -> None:
    repo = make_repo(tmp_path / "repo", generated(MODULES))

    async with host(repo) as ctx:
        first = await whole_answer(ctx)
        assert graph_data(first)["indexFromCache"] is False
        assert await entries_settle(cache, 1, INDEX_ENTRIES) == 1
    async with host(repo) as ctx:  # a new provider: the same tree's index is read back
        second = await whole_answer(ctx)
        assert graph_data(second)["indexFromCache"] is True
        assert callers_of(second) == callers_of(first)
        assert second["coverage"]["exhaustive"] is True

    write_files(repo, {"src/gen/mod_3.py": "def f_3(v):\n    return v\n"})
    git(repo, "commit", "-qam", "mod_3 no longer rounds")
    async with host(repo) as ctx:  # one blob changed: another tree, resolved again
        third = await whole_answer(ctx)
        assert graph_data(third)["indexFromCache"] is False
        assert callers_of(third) == callers_of(first) - {"src/gen/mod_3.py::f_3"}
    assert await entries_settle(cache, 2, INDEX_ENTRIES) == 2
