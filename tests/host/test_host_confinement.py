"""A hostile trusted provider against the real host: what the OS enforces from the grant (memory,
open files), what the host checks itself (a work tree written during an evaluation is
direct-write-risk → deny), and what status says is only declared (filesystem, network)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reference_host.providers.fake import PLANTED
from reference_host.sessions.confine import DECLARED, ENFORCED
from tests.support.host_checks import check_status
from tests.support.host_harness import running
from tests.support.host_pool import HostPool, HostUnderTest
from tests.support.host_scenarios import one_provider


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[HostPool]:
    hosts = HostPool(tmp_path)
    yield hosts
    hosts.end_test()


def _evaluate(hut: HostUnderTest, edit: dict[str, str]) -> dict[str, Any]:
    changeset = hut.changeset(edit)
    params = {"callSite": "gate", "changeset": changeset}
    result: dict[str, Any] = hut.call("host/evaluateChangeset", params, timeout=60)
    return result


def _reasons(result: dict[str, Any]) -> dict[str, str]:
    return {d["reason"]: d.get("detail", "") for d in result["coverage"]["degraded"]}


def test_a_provider_that_writes_the_workspace_gets_a_deny(pool: HostPool) -> None:
    hut = pool.get(one_provider("writes-workspace"), fresh=True)
    result = _evaluate(hut, {"src/app.py": "VALUE = 2\n"})
    assert (hut.repo / PLANTED).is_file(), "the hostile provider did write the work tree"
    assert result["decision"] == "deny" and result["pass"] is False
    reasons = _reasons(result)
    assert "direct-write-risk" in reasons and PLANTED in reasons["direct-write-risk"]
    (hut.repo / PLANTED).unlink()  # so the pool's clean-tree check sees the host's own work only


@pytest.mark.parametrize("behavior", ["allocates", "opens-fds"])
def test_a_provider_past_its_memory_or_fd_limit_is_stopped(pool: HostPool, behavior: str) -> None:
    """Unconfined, both would answer `complete` (3 GiB of address space, 1,000 fds) and the
    gate would allow; under the grant's address-space / open-file limits they fail instead."""
    hut = pool.get(one_provider(behavior), fresh=True)
    result = hut.evaluate("gate", hut.changeset({"src/app.py": "VALUE = 3\n"}))
    assert result["decision"] != "allow" and result["pass"] is False
    assert result["coverage"]["exhaustive"] is False


def test_status_says_what_the_grant_enforces_and_what_it_only_declares(pool: HostPool) -> None:
    hut = pool.get(one_provider("clean"), fresh=True)
    status = hut.call("host/status", {})
    check_status(status)  # schema-valid with the added detail
    (server,) = [s for s in status["servers"] if s["id"] == "fake-clean"]
    assert ENFORCED in server["detail"] and DECLARED in server["detail"]
    assert "read-only filesystem, no network" in server["detail"]
    authority = hut.call("host/authority/status", {})
    assert all(p["authorityEvidence"]["isolation"] == "advisory" for p in authority["providers"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_confined_process_dies_with_its_parent() -> None:
    """The launch shim asks the kernel to kill the provider when its parent (the host) dies."""
    script = (
        "import subprocess; from reference_host.sessions.confine import confined_argv; "
        "p = subprocess.Popen(confined_argv(['sleep', '120'], {'memoryMb': 1024, 'fd': 256})); "
        "print(p.pid, flush=True)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    pid = int(done.stdout)
    deadline = (
        time.monotonic() + 20
    )  # SIGKILL delivery is asynchronous: a bounded wait, not a timing
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not running(pid), "the confined child outlived its parent"
