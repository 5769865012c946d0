"""The host's git runs nothing the repository names (docs/workspace-git.md), through every method.

The repository (tests/support/hostile_repo.py) names a marker program for every config key and
attribute git could run, directly, through `include.path` / `includeIf`, and in a submodule. A
plain `git status` there runs the marker (the test proves the trap is live); the real host
subprocess, and the bridge in front of it, must never run it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.definitions import assert_valid
from tests.support.host_checks import check_authority_status, check_capabilities, check_status
from tests.support.host_harness import HostProcess
from tests.support.hostile_repo import hostile_repo, marker_runs
from tests.support.mcp_helpers import assert_labelled

INSPECT_RESULT = "outer-host.schema.json#/$defs/queryInspectResult"
VERDICT = "verdict.schema.json"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = hostile_repo(tmp_path / "hostile")
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    assert marker_runs(repo), "the trap is live: an unprotected git status runs the marker"
    (repo.parent / "marker.log").unlink()
    return repo


def _every_method(host: HostProcess) -> dict[str, Any]:
    results: dict[str, Any] = {}
    results["status"] = host.call("host/status", {})
    check_status(results["status"])
    results["capabilities"] = host.call("host/capabilities", {})
    check_capabilities(results["capabilities"])
    results["authority"] = host.call("host/authority/status", {})
    check_authority_status(results["authority"])
    working = host.call("host/workingChangeset", {})
    results["working"] = working
    for call_site in ("interactive", "gate", "sweep"):
        verdict = host.call(
            "host/evaluateChangeset",
            {"callSite": call_site, "changeset": working["changeset"]},
            timeout=60,
        )
        assert_valid(verdict, VERDICT)
        results[call_site] = verdict
    inspect = host.call(
        "host/queryInspect",
        {"callSite": "interactive", "request": {"verb": "symbols", "path": "app.py"}},
        timeout=60,
    )
    assert_valid(inspect, INSPECT_RESULT)
    results["inspect"] = inspect
    return results


@pytest.mark.needs_definitions
def test_no_repository_program_runs_through_any_host_method(repo: Path) -> None:
    host = HostProcess(repo).start()
    try:
        results = _every_method(host)
        results = _every_method(host)  # warm sessions and caches too
    finally:
        assert host.stop() == 0
    assert marker_runs(repo) == []
    changes = {c["path"]: c["kind"] for c in results["working"]["changeset"]["changes"]}
    assert changes["app.py"] == "modify" and changes["notes.txt"] == "modify"
    assert changes["filtered.txt"] == "modify", (
        "a path whose clean filter may not run is compared byte for byte, never called clean"
    )
    assert not any(path.startswith("sub") for path in changes), "submodule content is not ours"
    for site in ("interactive", "gate", "sweep"):
        assert results[site]["decision"] == "indeterminate", "the .txt files were not analysed"


@pytest.mark.slow
def test_no_repository_program_runs_through_the_bridge(repo: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bridge", "serve", "--repo", str(repo)],
        env={**os.environ, "ASP_BRIDGE_BACKOFF_INITIAL": "0.01"},
        cwd=str(repo),
    )

    async def session() -> None:
        with anyio.fail_after(90):
            async with Client(params, mode="auto", read_timeout_seconds=60) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                for _ in range(2):
                    for name in ("asp_status", "asp_capabilities", "asp_authority_status"):
                        assert_labelled(await client.call_tool(name, {}), is_error=False)
                    if "asp_ext_evaluate_changeset" in names:
                        result = await client.call_tool("asp_ext_evaluate_changeset", {})
                        assert_labelled(result, binding="mcp-extension")

    anyio.run(session)
    assert marker_runs(repo) == []
