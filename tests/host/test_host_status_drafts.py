"""A status-like answer drafted while git runs is encoded then too (reference_host/status/
drafts.py): the bytes answered are exactly the encoding of the stamped answer, the stamps are
taken once git has answered, and a draft whose placeholders are not unambiguous is stamped as a
dict instead. The server starts git as the request is read (asp_protocol/handling.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from asp_protocol.framing import EncodedJson, compact_json, encode_result
from reference_host.cli import build_context
from reference_host.receipts import Clock
from reference_host.status import drafts
from reference_host.status.results import (
    StatusLike,
    host_authority_status,
    host_capabilities,
    host_status,
    status_like_async,
    status_like_wire,
)
from reference_host.status.snapshot import start_reading
from tests.host.test_host_status_guess import STAMPS, _unstamped, settled  # noqa: F401
from tests.support.gitrepo import make_repo


def _wire(ctx: Any, fn: StatusLike) -> dict[str, Any] | EncodedJson:
    """`fn`'s answer as the server gives it to the endpoint (git started as the request is read)."""

    async def main() -> dict[str, Any] | EncodedJson:
        return await status_like_wire(fn, ctx, {}, start_reading(ctx))

    return anyio.run(main)


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("fn", [host_status, host_capabilities, host_authority_status])
def test_a_confirmed_draft_is_answered_as_the_bytes_of_the_stamped_answer(
    tmp_path: Path, fn: StatusLike
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    ctx = build_context(repo, None, "advisory")
    assert isinstance(_wire(ctx, fn), dict), "no earlier reading: nothing drafted"
    answer = _wire(ctx, fn)
    assert isinstance(answer, EncodedJson), "the same git answer again: the encoded draft"
    value = json.loads(answer.data)
    assert compact_json(value) == answer.data  # exactly the encoder's bytes for that value
    built = anyio.run(status_like_async, fn, ctx, {})
    assert _unstamped(value) == _unstamped(built)
    assert list(value["receipt"]) == list(built["receipt"])  # every member in its place
    receipt = value["receipt"]
    assert receipt["issuedAt"] == receipt["timing"]["endedAt"]
    assert receipt["timing"]["startedAt"] <= receipt["timing"]["endedAt"]


def _receipted(**receipt: Any) -> dict[str, Any]:
    return {"before": "x", "receipt": receipt, "after": [1, 2]}


@pytest.mark.parametrize(
    "value",
    [
        _receipted(issuedAt="", kind="status", timing={}, failures=[]),
        _receipted(timing={}, kind="status", issuedAt=""),  # timing first
        _receipted(kind='é \u2028 "quoted"', issuedAt="", timing={}),
    ],
)
def test_stamping_the_encoded_pieces_gives_the_bytes_of_the_stamped_dict(value: Any) -> None:
    drafted = drafts.draft(value)
    assert drafted.pieces is not None
    answer = drafts.stamped(drafted, Clock())
    assert isinstance(answer, EncodedJson)
    stamped = json.loads(answer.data)
    assert list(stamped["receipt"]) == list(value["receipt"])
    assert compact_json(stamped) == answer.data
    assert stamped["receipt"]["issuedAt"] == stamped["receipt"]["timing"]["endedAt"]
    assert {k: v for k, v in stamped["receipt"].items() if k not in STAMPS} == {
        k: v for k, v in value["receipt"].items() if k not in STAMPS
    }


def test_a_placeholder_found_elsewhere_leaves_the_stamps_to_the_dict() -> None:
    """A string equal to a placeholder elsewhere in the answer would make the cut ambiguous:
    the stamps then go into the dict, which the endpoint encodes whole."""
    for name in ("_ISSUED", "_TIMING"):
        value = _receipted(issuedAt="", timing={}, note=getattr(drafts, name))
        drafted = drafts.draft(value)
        assert drafted.pieces is None
        answer = drafts.stamped(drafted, Clock())
        assert isinstance(answer, dict) and answer["receipt"]["note"] == getattr(drafts, name)
        assert answer["receipt"]["issuedAt"] == answer["receipt"]["timing"]["endedAt"]


def test_the_wire_line_of_a_status_is_the_encoding_of_its_value(tmp_path: Path) -> None:
    """Over a real host's pipes: every answer line, the encoded drafts' included, is byte for
    byte what the encoder writes for the message it holds."""
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    argv = [sys.executable, "-m", "reference_host", "serve", "--repo", str(repo)]
    env = {k: v for k, v in os.environ.items() if k != "ASP_HOST_TRUSTED_DIR"}
    host = subprocess.Popen(
        [*argv, "--trusted-dir", str(trusted)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert host.stdin is not None and host.stdout is not None
    lines = []
    try:
        for n, method in enumerate(["host/status"] * 3 + ["host/capabilities"] * 2):
            request = {"jsonrpc": "2.0", "id": f"r{n}", "method": method, "params": {}}
            host.stdin.write(json.dumps(request).encode() + b"\n")
            host.stdin.flush()
            lines.append(host.stdout.readline())
    finally:
        host.stdin.close()
        assert host.wait(timeout=30) == 0
    for n, line in enumerate(lines):
        message = json.loads(line)
        assert message["id"] == f"r{n}" and "result" in message
        assert encode_result(message["id"], message["result"]) == line
