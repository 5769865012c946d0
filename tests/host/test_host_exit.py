"""`asp-host serve` ends cleanly when its client goes away: a provider's child that escaped its
process group and still holds the provider's pipes is ended with it, and nothing is printed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from tests.support.gitrepo import write_files
from tests.support.host_harness import running
from tests.support.host_scenarios import one_provider, prepare


def _gone(pid: int) -> bool:
    """SIGKILL lands asynchronously: wait (bounded) until *pid* is gone or a zombie."""
    deadline = time.monotonic() + 10
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running(pid)


def _call(stdin: IO[bytes], stdout: IO[bytes], key: int, method: str, params: Any) -> Any:
    stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": key, "method": method, "params": params}).encode()
    )
    stdin.write(b"\n")
    stdin.flush()
    reply = json.loads(stdout.readline())
    assert reply["id"] == key and "result" in reply, reply
    return reply["result"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fake's escaped child")
def test_the_host_exits_quietly_while_a_providers_child_holds_its_pipes(tmp_path: Path) -> None:
    """Before the fix the host exited 0, left the child running and printed a traceback ("Event
    loop is closed") from the provider pipe it held open, closed only after the loop had ended."""
    pid_file = tmp_path / "provider-pids"
    repo, trusted, _ = prepare(tmp_path, one_provider("forks-child", pid_file=str(pid_file)))
    write_files(repo, {"src/app.py": "VALUE = 9\n"})
    argv = [sys.executable, "-m", "reference_host", "serve", "--repo", str(repo)]
    env = {**os.environ, "ASP_HOST_TRUSTED_DIR": str(trusted)}
    host = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    escaped: list[int] = []
    try:
        assert host.stdin is not None and host.stdout is not None
        working = _call(host.stdin, host.stdout, 1, "host/workingChangeset", {})
        params = {"callSite": "interactive", "changeset": working["changeset"]}
        result = _call(host.stdin, host.stdout, 2, "host/evaluateChangeset", params)
        assert result["coverage"]["ran"] == ["fake-check"], result["coverage"]  # the fake ran
        escaped = [int(p) for p in pid_file.read_text().split()][1:]
        assert escaped and os.getpgid(escaped[0]) != os.getpgid(host.pid)
        _, stderr = host.communicate(timeout=60)  # stdin closed: EOF, then both pipes to EOF
        text = stderr.decode("utf-8", "replace")
        assert host.returncode == 0, text[-2000:]
        assert "Exception ignored" not in text and "Event loop is closed" not in text, text[-2000:]
        assert _gone(escaped[0]), "the provider's escaped child outlived the host"
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
        for pid in escaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
