"""Streamable HTTP that the wrong people cannot reach: Host/Origin checks on a loopback address the
SDK does not protect by itself (127.0.0.2), a bearer token on every request, no start off loopback
without one, and each session seeing only its own exchanges in the debug tools."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.gitrepo import make_repo
from tests.support.http_bridge import free_port, running, serve_argv
from tests.support.mcp_helpers import assert_labelled

pytestmark = pytest.mark.anyio
BIND = "127.0.0.2"
TOKEN = "t0ken-for-tests-" + "x" * 16
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[str]:
    """A bridge on 127.0.0.2 with a token from the environment; yields its URL."""
    repo = make_repo(tmp_path / "repo", {"pkg/mod.py": "VALUE = 1\n"})
    port = free_port()
    argv = serve_argv(repo, "--http-host", BIND, "--port", str(port))
    env = {**os.environ, "ASP_BRIDGE_HTTP_TOKEN": TOKEN}
    with running(argv, tmp_path / "bridge.stderr", env=env):
        yield f"http://{BIND}:{port}/mcp"


async def _post(url: str, headers: dict[str, str]) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            while True:
                try:
                    return await http.post(url, json=INIT, headers={**ACCEPT, **headers})
                except httpx2.ConnectError:
                    await anyio.sleep(0.1)  # not listening yet


async def test_foreign_host_origin_and_missing_token_are_refused(guarded: str) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert (await _post(guarded, {})).status_code == 401
    assert (await _post(guarded, {"authorization": "Bearer wrong"})).status_code == 401
    assert (await _post(guarded, {**auth, "host": "evil.example"})).status_code == 421
    assert (await _post(guarded, {**auth, "origin": "http://evil.example"})).status_code == 403
    ok = await _post(guarded, {**auth, "origin": f"http://{BIND}:1234"})
    assert ok.status_code == 200, ok.text


def _client(url: str) -> Client:
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), mode="legacy")


async def test_each_session_sees_only_its_own_exchanges(guarded: str) -> None:
    await _post(guarded, {"authorization": f"Bearer {TOKEN}"})  # wait until it listens
    with anyio.fail_after(120):
        async with _client(guarded) as first, _client(guarded) as second:
            assert_labelled(await first.call_tool("asp_status", {}), is_error=False)
            own = assert_labelled(await first.call_tool("asp_debug_trace", {}))["bridgeResult"]
            other = assert_labelled(await second.call_tool("asp_debug_trace", {}))["bridgeResult"]
            host = assert_labelled(await second.call_tool("asp_debug_host", {}))["bridgeResult"]
    assert [e["method"] for e in own["entries"]] == ["host/status"]
    assert other["entries"] == [] and "only this session" in other["sessionScope"]
    assert "stderrTail" not in host and "latency" not in host


@pytest.mark.parametrize("bind", ["0.0.0.0", "192.0.2.1"])
def test_off_loopback_without_a_token_refuses_to_start(tmp_path: Path, bind: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ASP_BRIDGE_HTTP_TOKEN"}
    done = subprocess.run(
        serve_argv(tmp_path, "--http-host", bind),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert "without a bearer token" in done.stderr and "ASP_BRIDGE_HTTP_TOKEN" in done.stderr
