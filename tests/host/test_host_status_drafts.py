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
from reference_host.repo.workspace import WorkTreeState
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


def _built(ctx: Any, fn: StatusLike) -> dict[str, Any]:
    """The same answer built the plain way, right after (nothing changed in between)."""
    return anyio.run(status_like_async, fn, ctx, {})


def _rewrite(repo: Path) -> None:
    (repo / "a.py").write_text("x = 3\n")  # same size: git answers the same bytes


def _add(repo: Path) -> None:
    (repo / "added.py").write_text("new\n")  # git's answer changes: the guess is dropped


def _clean(repo: Path) -> None:
    (repo / "a.py").write_text("x = 1\n")  # back to HEAD (the guess, compared now, says so)


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("fn", [host_status, host_capabilities, host_authority_status])
@pytest.mark.parametrize(
    "change", [_rewrite, _add, _clean], ids=["guess confirmed", "guess dropped", "now clean"]
)
def test_a_drafted_answer_is_the_bytes_of_the_answer_built_from_gits_state(
    tmp_path: Path, fn: StatusLike, change: Any
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    ctx = build_context(repo, None, "advisory")
    assert isinstance(_wire(ctx, fn), dict), "no earlier reading: nothing drafted"
    before = _built(ctx, fn)
    change(repo)
    answer = _wire(ctx, fn)
    assert isinstance(answer, EncodedJson), "drafted while git ran, its placeholders filled"
    value = json.loads(answer.data)
    assert compact_json(value) == answer.data  # exactly the encoder's bytes for that value
    built = _built(ctx, fn)
    assert _unstamped(value) == _unstamped(built)
    assert list(value["receipt"]) == list(built["receipt"])  # every member in its place
    assert value["receipt"]["baseline"] == built["receipt"]["baseline"]
    assert value["receipt"]["baseline"] != before["receipt"]["baseline"]  # git's new state's
    receipt = value["receipt"]
    assert receipt["issuedAt"] == receipt["timing"]["endedAt"]
    assert receipt["timing"]["startedAt"] <= receipt["timing"]["endedAt"]


@pytest.mark.usefixtures("settled")
def test_an_answer_that_reads_more_of_the_state_or_reworks_a_value_is_built_after_git(
    tmp_path: Path,
) -> None:
    """A template state has `rev`, `dirty`, `baseline()` and `unusable` only, and a placeholder
    must be taken as a whole value: otherwise the answer is built from git's state."""
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    ctx = build_context(repo, None, "advisory")
    drafted: list[Any] = []

    def reads_differing(ctx: Any, params: Any, snap: Any) -> dict[str, Any]:
        drafted.append(snap.state)
        return {**host_status(ctx, params, snap), "paths": sorted(snap.state.differing)}

    def reworks_rev(ctx: Any, params: Any, snap: Any) -> dict[str, Any]:
        drafted.append(snap.state)
        return {**host_status(ctx, params, snap), "short": f"rev {snap.state.rev}"}

    for fn, extra in ((reads_differing, {"paths": ["a.py"]}), (reworks_rev, None)):
        _wire(ctx, fn)
        drafted.clear()
        answer = _wire(ctx, fn)
        assert isinstance(answer, dict), "not drafted: built from git's state"
        assert len(drafted) == 2, "a template was tried, then the answer built after git"
        assert answer["workspace"]["baseline"] == _built(ctx, host_status)["workspace"]["baseline"]
        if extra is not None:
            assert answer["paths"] == extra["paths"]
        else:
            assert answer["short"] == f"rev {answer['workspace']['baseline']['rev']}"


@pytest.mark.usefixtures("settled")
def test_a_tree_that_became_dirty_unguessed_is_answered_as_built_from_gits_state(
    tmp_path: Path,
) -> None:
    """Drafted from a clean guess (no dirty digest), git then names a new file: the draft has no
    place for a dirty digest, so the answer is built after git."""
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    ctx = build_context(repo, None, "advisory")
    _wire(ctx, host_status)
    assert isinstance(_wire(ctx, host_status), EncodedJson)
    _add(repo)
    answer = _wire(ctx, host_status)
    assert isinstance(answer, dict) and answer["receipt"]["baseline"]["dirty"]
    assert _unstamped(answer) == _unstamped(_built(ctx, host_status))


def test_a_draft_is_not_filled_for_an_unusable_state_or_another_kind_of_baseline() -> None:
    clean = WorkTreeState("t", "git:tree:t", {}, {})
    dirty = WorkTreeState("t", "git:tree:t", {"a": "1"}, {"a": "blob:x"})
    unusable = WorkTreeState(None, "unavailable:git", {}, {}, unusable="no git")
    for made_dirty, state, fits in [
        (True, dirty, True),
        (True, clean, False),
        (False, clean, True),
        (False, dirty, False),
        (False, unusable, False),
    ]:
        template = drafts.Draft((b'{"r":', b',"d":', b"}"), (0, 1), made_dirty, "status")
        answer = drafts.filled(template, state, Clock())
        assert (answer is not None) == fits
        if answer is not None:
            assert json.loads(answer.data) == {"r": state.rev, "d": state.dirty}


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


def test_the_stamps_and_state_values_put_in_after_git_are_the_encoders_bytes() -> None:
    """Plain strings (time stamps, receipt ids, revs, digests) are written without the encoder;
    every value is still exactly what the encoder writes."""
    values: list[Any] = ["2026-12-02T00:47:01.123Z", "status-1764636421123-7", "git:tree:ab12"]
    values += ["sha256:" + "f" * 64, "", 'a"quote', "back\\slash", "tab\tch", "é", "\x01", "a b"]
    values += [0, 12345, -3, True, False, None, 1.5]
    for value in values:
        assert drafts._value(value) == compact_json(value), value
        if isinstance(value, str):
            assert drafts._string(value) == compact_json(value), value
