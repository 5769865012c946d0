"""Policy edge cases fail closed, on the real reference host through the bridge: a `.asp/asp.json`
with NaN / Infinity is a rejected policy with a reason (never an internal error), and a policy the
host rejects leaves `adapters.mcp` unknown, so evaluate and edit-plan are refused until it parses
while reads pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from bridge import adapter_policy
from bridge.ext.bakeoff import cases
from bridge.ext.bakeoff.workspace import PreparedCase, prepare
from tests.support.ext_bridge import case_settings, extension_server
from tests.support.mcp_helpers import assert_labelled

pytestmark = pytest.mark.anyio
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@x",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@x",
    "PATH": "/usr/bin:/bin",
}


def _commit_policy(repo: Path, text: str) -> None:
    (repo / ".asp" / "asp.json").write_text(text)
    env = {**GIT_ENV, "HOME": str(repo)}
    subprocess.run(["git", "add", ".asp/asp.json"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "policy"], cwd=repo, env=env, check=True)


@pytest.fixture
def case(tmp_path: Path) -> PreparedCase:
    return prepare(cases.select(["allow"])[0], tmp_path, python=sys.executable)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
async def test_a_non_json_number_in_the_policy_is_rejected_and_evaluate_is_refused(
    case: PreparedCase, constant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adapter_policy, "POLICY_TIMEOUT_S", 60.0)  # a slow machine is not the point
    policy = (case.repo / ".asp" / "asp.json").read_text()
    # A syntactically plausible document whose adapters block would allow everything.
    _commit_policy(case.repo, policy.rstrip()[:-1] + f', "x-budget": {constant}}}\n')
    server, _ = extension_server(case_settings(case))
    with anyio.fail_after(90):
        async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
            status = assert_labelled(await client.call_tool("asp_status", {}), is_error=False)
            evaluate = await client.call_tool(
                "asp_ext_evaluate_changeset", {"changeset": case.changeset}
            )
            trace = await client.call_tool("asp_debug_trace", {"limit": 100})
    policy_state = status["hostResult"]["policy"]
    assert policy_state["activation"] == "rejected"
    refused = assert_labelled(evaluate, is_error=True, binding="mcp-extension")["error"]
    assert refused["reason"] == "refused"
    assert "until the policy parses" in refused["message"]
    assert constant.lstrip("-") in refused["message"]  # the host's reason is carried
    methods = [e["method"] for e in assert_labelled(trace)["bridgeResult"]["entries"]]
    assert "host/evaluateChangeset" not in methods
    assert all(e["outcome"] == "ok" for e in assert_labelled(trace)["bridgeResult"]["entries"])
