"""Raw bad lines over stdio against the real `asp-mcp-bridge serve` process: every one gets a typed
JSON-RPC answer (never silence), and the server keeps serving afterwards."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.bad_host import __file__ as BAD_HOST

pytestmark = pytest.mark.slow

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


class RawBridge:
    """`serve` over pipes, spoken to line by line (blocking reads with a timeout via the process)."""

    def __init__(self, repo: Path) -> None:
        host = shlex.join([sys.executable, str(BAD_HOST), "ok"])
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bridge", "serve", "--repo", str(repo), "--host", host],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send(self, line: bytes) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture
def bridge(tmp_path: Path) -> Any:
    raw = RawBridge(tmp_path)
    assert "result" in raw.send(json.dumps(INITIALIZE).encode())
    assert raw.process.stdin is not None
    raw.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    raw.process.stdin.flush()
    yield raw
    raw.close()


def _status(raw: RawBridge, request_id: int) -> dict[str, Any]:
    call = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
    call["params"] = {"name": "asp_status", "arguments": {}}
    return raw.send(json.dumps(call).encode())


def test_every_bad_line_gets_a_typed_answer_and_serving_continues(bridge: RawBridge) -> None:
    nested = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":' + b"[" * 300
    nested += b"]" * 300 + b"}}"
    cases: list[tuple[bytes, Any, int]] = [
        (b"{not json", None, -32700),
        (nested, None, -32700),  # nesting past what the parser takes
        (b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"s":"\\ud800"}}', None, -32700),
        (b"[1, 2]", None, -32600),
        (b'{"hello": "world"}', None, -32600),
        (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}', 9, -32602),
        (b'{"jsonrpc":"2.0","id":"s","method":"tools/list","params":"x"}', "s", -32602),
    ]
    for line, request_id, code in cases:
        answer = bridge.send(line)
        assert answer["id"] == request_id, line
        assert answer["error"]["code"] == code, line
    result = _status(bridge, 10)
    assert result["id"] == 10 and result["result"]["structuredContent"]["nonAuthoritative"] is True


def test_an_over_limit_request_is_refused_at_once(bridge: RawBridge) -> None:
    filler = "x" * (16 * 1024 * 1024 + 10)
    line = b'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"asp_status",'
    line += b'"arguments":{"pad":"' + filler.encode() + b'"}}}'
    answer = bridge.send(line)
    assert answer["id"] == 21
    assert answer["error"]["code"] == -32600
    assert answer["error"]["data"]["reason"] == "refused"
    assert _status(bridge, 22)["id"] == 22
