"""The host's provider sessions, driven through a real `asp-host serve` and a recording provider.

What the provider is given (argv launch, trusted cwd, allowlisted environment, narrowed grant,
exact protocol version, `callSite` only for asp/0.1), what its callbacks may read, how an outer
cancellation reaches it, and that the work tree stays byte-identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from asp_protocol.jsonrpc import JsonRpcEndpoint
from asp_protocol.policy_rules import policy_rules
from tests.support.definitions import assert_valid
from tests.support.gitrepo import git, make_repo, snapshot_tree, write_files

pytestmark = pytest.mark.anyio
TESTS_DIR = Path(__file__).resolve().parents[1]
EVALUATE_REF = "outer-host.schema.json#/$defs/evaluateChangesetResult"


def probe_manifest(
    trusted: Path,
    record: Path,
    *,
    protocol: str = "asp/1.0",
    mode: str = "clean",
    inspect: bool = False,
) -> None:
    folder = trusted / "probe"
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "manifestVersion": "asp-server/1.0",
        "server": {"id": "probe", "name": "probe", "version": "1.0.0"},
        "protocolVersions": [protocol],
        "capabilities": ["check", "inspect"] if inspect else ["check"],
        "entrypoint": {
            "transport": "stdio",
            "bin": sys.executable,
            "args": [
                "-m",
                "support.host_probe_provider",
                "--record",
                str(record),
                "--protocol",
                protocol,
                "--mode",
                mode,
                *(["--inspect"] if inspect else []),
            ],
        },
        "artifact": {"fingerprint": "sha256:probe"},
        "provenance": {"publisher": "probe-pub", "source": "tests", "license": "MIT"},
        "accessExpectations": {
            "filesystem": {"read": ["workspace:snapshot"], "write": []},
            "network": {"outbound": False, "allowlist": []},
            "secrets": {"names": []},
            "environment": {"inherit": False, "variables": ["ASP_SESSION_ID"]},
            "dataClasses": ["source-code"],
        },
    }
    (folder / "asp-server.json").write_text(json.dumps(manifest), encoding="utf-8")


def probe_policy(budget_ms: int = 20000) -> str:
    pin = {
        "id": "probe",
        "version": "1.0.0",
        "identity": "probe-pub",
        "integrity": "sha256:probe",
        "conformance": "not_claimed",
    }
    gate = {"requiredRequirements": ["probe-check"], "optionalRequirements": []}
    return json.dumps(
        {
            "aspVersion": "asp/1.0",
            "requirements": [
                {
                    "id": "probe-check",
                    "capabilities": ["check"],
                    "assurance": ["advisory"],
                    "authority": {"providers": [pin]},
                }
            ],
            "gates": {"interactive": gate, "gate": gate, "sweep": gate},
            "policy": policy_rules(),
            "budgets": {"interactiveMs": budget_ms, "gateMs": budget_ms, "sweepMs": budget_ms},
        }
    )


@asynccontextmanager
async def running_host(repo: Path, trusted: Path) -> AsyncIterator[JsonRpcEndpoint]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS_DIR), "ASP_SECRET_TOKEN": "do-not-leak"}
    process = await anyio.open_process(
        [
            sys.executable,
            "-m",
            "reference_host",
            "serve",
            "--repo",
            str(repo),
            "--trusted-dir",
            str(trusted),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdout is not None and process.stdin is not None
    endpoint = JsonRpcEndpoint(process.stdout, process.stdin, name="test-client")
    async with anyio.create_task_group() as tg:
        tg.start_soon(endpoint.serve)
        try:
            yield endpoint
        finally:
            await process.stdin.aclose()
            with anyio.fail_after(15):
                assert await process.wait() == 0
            tg.cancel_scope.cancel()


async def evaluate_working(host: JsonRpcEndpoint) -> dict[str, Any]:
    """`host/evaluateChangeset` at `gate` of the host's own working changeset."""
    working = await host.request("host/workingChangeset", {}, timeout=20)
    result: dict[str, Any] = await host.request(
        "host/evaluateChangeset",
        {"callSite": "gate", "changeset": working["changeset"]},
        timeout=30,
    )
    return result


def records(path: Path, kind: str) -> list[Any]:
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [line["value"] for line in lines if line["kind"] == kind]


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo = make_repo(
        tmp_path / "repo",
        {"src/app.py": "A = 1\n", ".env": "TOKEN=1\n", ".asp/asp.json": probe_policy()},
    )
    trusted = tmp_path / "trusted"
    return repo, trusted, tmp_path / "record.jsonl"


@pytest.mark.needs_definitions
async def test_launch_grant_callbacks_and_clean_allow(workspace: tuple[Path, Path, Path]) -> None:
    repo, trusted, record = workspace
    probe_manifest(trusted, record)
    write_files(repo, {"src/app.py": "A = 2\n", ".env": "TOKEN=2\n"})
    before = snapshot_tree(repo)
    async with running_host(repo, trusted) as host:
        result = await evaluate_working(host)
    assert_valid(result, EVALUATE_REF)
    assert snapshot_tree(repo) == before, "the host never writes the workspace"

    launch = records(record, "launch")[0]
    assert set(launch["env"]) <= {
        "PATH",
        "LANG",
        "LC_ALL",
        "PYTHONPATH",
        "SYSTEMROOT",
        "ASP_SESSION_ID",
        "LC_CTYPE",
    }, "environment comes only from the allowlist"
    assert "ASP_SECRET_TOKEN" not in launch["env"] and launch["env"]["ASP_SESSION_ID"]
    assert Path(launch["cwd"]).resolve() == (trusted / "probe").resolve(), (
        "cwd is the trusted dir, not the repo"
    )

    init = records(record, "initialize")[0]
    assert init["protocolVersion"] == "asp/1.0"
    granted = records(record, "initialized")[0]["grantedPermissions"]
    assert granted["write"] is False and granted["network"] is False, (
        "network request is narrowed away"
    )
    assert set(granted["resourceLimits"]) >= {"wallclockMs"}
    assert "callSite" not in records(record, "evaluate")[0], "asp/1.0 providers get only v1 fields"

    callbacks = records(record, "callbacks")[0]
    env_blob = blob_id(b"TOKEN=2\n")
    app_blob = blob_id(b"A = 2\n")
    assert "blobs" in callbacks["read"][app_blob]
    assert callbacks["read"][env_blob]["error"] == -32012, (
        "in-changeset but out-of-grant blob is refused"
    )
    assert callbacks["not_in_session"]["error"] == -32012
    assert ".env" not in callbacks["tree"] and "src/app.py" in callbacks["tree"]

    assert result["decision"] == "allow", result["coverage"]
    assert result["coverage"]["ran"] == ["probe-check"]
    assert result["validAsOf"]["blobs"] == [app_blob]
    assert result["receipt"]["failures"] == result["coverage"]["degraded"] == []


async def test_the_listing_says_which_paths_are_symbolic_links(
    workspace: tuple[Path, Path, Path],
) -> None:
    """A link's blob is its target path: only the listing's `kind` tells a provider so."""
    repo, trusted, record = workspace
    os.symlink("app.py", repo / "src/alias.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link")
    probe_manifest(trusted, record)
    write_files(repo, {"src/app.py": "A = 2\n"})
    async with running_host(repo, trusted) as host:
        await evaluate_working(host)
    kinds = records(record, "callbacks")[0]["kinds"]
    assert kinds["src/alias.py"] == "symlink" and kinds["src/app.py"] == "file", kinds
    assert set(kinds.values()) == {"file", "symlink"}


async def test_legacy_provider_gets_call_site(workspace: tuple[Path, Path, Path]) -> None:
    repo, trusted, record = workspace
    probe_manifest(trusted, record, protocol="asp/0.1")
    write_files(repo, {"src/app.py": "A = 3\n"})
    async with running_host(repo, trusted) as host:
        working = await host.request("host/workingChangeset", {"paths": ["src"]}, timeout=20)
        result = await host.request(
            "host/evaluateChangeset",
            {"callSite": "sweep", "changeset": working["changeset"]},
            timeout=30,
        )
    assert records(record, "initialize")[0]["protocolVersion"] == "asp/0.1"
    assert records(record, "initialize")[0]["hostCapabilities"]["listTree"] is True
    assert records(record, "evaluate")[0]["callSite"] == "sweep"
    assert result["decision"] == "allow"


async def test_outer_cancel_reaches_provider(workspace: tuple[Path, Path, Path]) -> None:
    repo, trusted, record = workspace
    probe_manifest(trusted, record, mode="wait")
    write_files(repo, {"src/app.py": "A = 4\n"})
    outcome: dict[str, Any] = {}
    async with running_host(repo, trusted) as host:
        working = await host.request("host/workingChangeset", {}, timeout=20)  # request id 1
        params = {"callSite": "gate", "changeset": working["changeset"]}

        async def call() -> None:
            try:
                outcome["result"] = await host.request(
                    "host/evaluateChangeset", params, timeout=30
                )  # id 2
            except AspError as exc:
                outcome["code"] = exc.code

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(20):
                while not records(record, "evaluate"):
                    await anyio.sleep(0.05)
            await host.notify("$/cancelRequest", {"id": 2})
        with anyio.fail_after(10):
            while not records(record, "cancel"):
                await anyio.sleep(0.05)
    assert outcome.get("code") == -32016, (
        f"the cancelled outer evaluate answers -32016, got {outcome}"
    )
    assert records(record, "cancel"), "the provider received $/cancelRequest"


@pytest.mark.needs_definitions
async def test_provider_gone_before_the_grant_is_crashed_coverage(
    workspace: tuple[Path, Path, Path],
) -> None:
    """A provider that answers initialize and exits before `initialized` is a crash: degraded
    coverage in a decision envelope, never an internal error or an unanswered request."""
    repo, trusted, record = workspace
    probe_manifest(trusted, record, mode="exit-after-initialize")
    write_files(repo, {"src/app.py": "A = 6\n"})
    async with running_host(repo, trusted) as host:
        result = await evaluate_working(host)
    assert_valid(result, EVALUATE_REF)
    assert result["decision"] == "indeterminate"
    degraded = [d for d in result["coverage"]["degraded"] if d["source"] == "probe"]
    assert [d["reason"] for d in degraded] == ["crashed"], degraded
    assert records(record, "initialize"), "the provider was launched and initialized"


async def test_inspect_query_does_not_kill_a_check_evaluation_of_the_same_provider(
    workspace: tuple[Path, Path, Path],
) -> None:
    """A provider serving check and inspect: a query while its evaluation runs must not stop the
    check session under it (the evaluation still allows; the query is answered too)."""
    repo, trusted, record = workspace
    probe_manifest(trusted, record, mode="slow", inspect=True)
    write_files(repo, {"src/app.py": "A = 7\n"})
    outcome: dict[str, Any] = {}
    async with running_host(repo, trusted) as host:
        working = await host.request("host/workingChangeset", {}, timeout=20)
        params = {"callSite": "gate", "changeset": working["changeset"]}

        async def evaluate() -> None:
            outcome["evaluate"] = await host.request("host/evaluateChangeset", params, timeout=30)

        async with anyio.create_task_group() as tg:
            tg.start_soon(evaluate)
            with anyio.fail_after(20):
                while not records(record, "evaluate"):
                    await anyio.sleep(0.05)
            outcome["inspect"] = await host.request(
                "host/queryInspect",
                {"callSite": "interactive", "request": {"verb": "symbols", "query": "A"}},
                timeout=30,
            )
    result = outcome["evaluate"]
    assert result["decision"] == "allow", result["coverage"]["degraded"]
    assert "probe/inspect" in outcome["inspect"]["coverage"]["ran"], outcome["inspect"]
    assert records(record, "symbols"), "the inspect query reached the provider"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.needs_definitions
async def test_status_is_lazy_and_providers_stop_with_the_host(
    workspace: tuple[Path, Path, Path],
) -> None:
    repo, trusted, record = workspace
    probe_manifest(trusted, record)
    write_files(repo, {"src/app.py": "A = 5\n"})
    async with running_host(repo, trusted) as host:
        status = await host.request("host/status", {}, timeout=20)
        assert_valid(status, "outer-host.schema.json#/$defs/statusResult")
        probe = next(s for s in status["servers"] if s["id"] == "probe")
        assert probe["state"] == "installed" and not records(record, "launch"), (
            "status never launches providers"
        )
        working = await host.request("host/workingChangeset", {}, timeout=20)
        await host.request(
            "host/evaluateChangeset",
            {"callSite": "interactive", "changeset": working["changeset"]},
            timeout=30,
        )
        await host.request(
            "host/evaluateChangeset",
            {"callSite": "gate", "changeset": working["changeset"]},
            timeout=30,
        )
        assert len(records(record, "launch")) == 1, "the warm session is reused"
        status = await host.request("host/status", {}, timeout=20)
        probe = next(s for s in status["servers"] if s["id"] == "probe")
        assert (probe["state"], probe["lifecycleState"]) == ("ready", "active")
    pid = records(record, "launch")[0]["pid"]
    with anyio.fail_after(5):
        while not _gone(pid):
            await anyio.sleep(0.05)
