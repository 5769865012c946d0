"""The bridge over streamable HTTP: `serve --transport streamable-http` answers a real SDK client."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from tests.support.gitrepo import make_repo
from tests.support.http_bridge import free_port, running, serve_argv, wait_listening
from tests.support.mcp_helpers import assert_labelled

pytestmark = pytest.mark.anyio


@pytest.fixture
def http_bridge(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    repo = make_repo(tmp_path / "repo", {"pkg/mod.py": "VALUE = 1\n"})
    port = free_port()
    with running(serve_argv(repo, "--port", str(port)), tmp_path / "bridge.stderr") as process:
        yield port, process


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_streamable_http_serves_labelled_tools(
    http_bridge: tuple[int, subprocess.Popen[bytes]], mode: str, tmp_path: Path
) -> None:
    port, process = http_bridge
    await wait_listening(port, process)
    url = f"http://127.0.0.1:{port}/mcp"
    assert url in (tmp_path / "bridge.stderr").read_text()  # the URL a user must paste
    async with Client(url, mode=mode, read_timeout_seconds=60) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"asp_status", "asp_capabilities", "asp_authority_status"} <= tools
        result = await client.call_tool("asp_status", {})
        status = await client.read_resource("asp://host/status")
        assert json.loads(status.contents[0].text)["hostMethod"] == "host/status"  # type: ignore[union-attr]
        brief = await client.get_prompt("asp_status_brief", {})
        assert "asp_status" in brief.messages[0].content.text  # type: ignore[union-attr]
    envelope = assert_labelled(result, is_error=False)
    assert envelope["hostMethod"] == "host/status"
    assert envelope["hostResult"]["host"]["name"] == "asp-reference-host"
    assert envelope["hostResult"]["receipt"]["kind"] == "status"
