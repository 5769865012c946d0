"""The status guessed while git runs (reference_host/repo/gitstatus.py, status/snapshot.py): used
only when git answers byte for byte what it answered last time, always with the files compared
again in this request, and never in place of a git that now fails."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.framing import EncodedJson
from reference_host.cli import build_context
from reference_host.context import HostContext
from reference_host.receipts import iso_now
from reference_host.repo import git as git_module
from reference_host.repo import workfiles
from reference_host.repo.gitstatus import STATUS_ARGS, NeedsReading
from reference_host.repo.workfiles import RACY_NS
from reference_host.repo.workspace import Workspace, WorkTreeState
from reference_host.status import results
from reference_host.status.results import (
    StatusLike,
    host_authority_status,
    host_capabilities,
    host_status,
    status_like_async,
    status_like_wire,
)
from reference_host.status.snapshot import Snapshot, snapshot_async, start_reading
from tests.support.gitrepo import git, make_repo, write_files
from tests.support.host_harness import HostProcess

STAMPS = ("receiptId", "issuedAt", "timing")


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if every file had last changed more than RACY_NS ago: digests are reused."""
    later = time.time_ns() + RACY_NS + 60_000_000_000  # files written in the next minute too
    monkeypatch.setattr(workfiles.time, "time_ns", lambda: later)


def _read(workspace: Workspace) -> tuple[WorkTreeState | None, WorkTreeState]:
    """(the guess made while git ran, the state) of one reading on the event loop."""

    async def main() -> tuple[WorkTreeState | None, WorkTreeState]:
        pending = workspace.start_state()
        try:
            guessed = pending.guess()
            await pending.answered()
            try:
                return guessed, pending.result(on_loop=True)
            except NeedsReading:  # a commit not seen yet: rev-parse
                return guessed, pending.result()
        finally:
            pending.close()

    return anyio.run(main)


def _git_answer(workspace: Workspace) -> bytes:
    return workspace.git(*STATUS_ARGS).stdout


@pytest.mark.usefixtures("settled")
def test_a_same_size_rewrite_is_seen_though_git_answers_the_same_bytes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    workspace = Workspace(repo)
    assert _read(workspace)[0] is None, "nothing read yet: no guess"
    guessed, state = _read(workspace)
    assert guessed is state, "the same answer again: the guess is the state"
    answer = _git_answer(workspace)
    (repo / "a.py").write_text("x = 3\n")  # same size: git's record of a.py does not change
    assert _git_answer(workspace) == answer
    guessed, state = _read(workspace)
    assert guessed is state and state.differing == {"a.py": blob_id(b"x = 3\n")}


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("change", ["new file", "reverted", "deleted", "committed"])
def test_a_different_git_answer_drops_the_guess(tmp_path: Path, change: str) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    workspace = Workspace(repo)
    _read(workspace)
    before = _read(workspace)[1]
    expected: dict[str, str | None]
    if change == "new file":
        (repo / "c.py").write_text("z = 1\n")
        expected = {"a.py": blob_id(b"x = 2\n"), "c.py": blob_id(b"z = 1\n")}
    elif change == "reverted":
        (repo / "a.py").write_text("x = 1\n")
        expected = {}
    elif change == "deleted":
        (repo / "b.py").unlink()
        expected = {"a.py": blob_id(b"x = 2\n"), "b.py": None}
    else:
        git(repo, "commit", "-q", "-am", "a.py changed")
        expected = {}
    guessed, state = _read(workspace)
    if change == "committed":  # the index was written: its skip flags are read again first
        assert guessed is None and state.tree != before.tree and state.differing == expected
        return  # (reference_host/repo/gitindex.py), so this status does not guess
    assert guessed is not None and guessed.tree == before.tree, "from the last answer"
    assert guessed is not state and state.differing == expected


@pytest.mark.usefixtures("settled")
def test_git_failing_after_a_good_reading_is_unusable_not_the_guess(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    workspace = Workspace(repo)
    _read(workspace)
    assert _read(workspace)[1].unusable is None
    # git refuses the object store (the index, whose change is itself read first, is kept)
    for loose in (repo / ".git" / "objects").glob("??"):
        shutil.rmtree(loose)
    guessed, state = _read(workspace)
    assert guessed is not None and guessed.unusable is None, "the guess was a good one"
    assert state is not guessed and state.unusable
    assert state.differing == {} and state.rev == "unavailable:git"


@pytest.mark.parametrize("breakage", ["dubious ownership", "corrupt", "git missing"])
def test_a_repository_broken_between_two_statuses_is_degraded_with_gits_reason(
    tmp_path: Path, breakage: str
) -> None:
    if breakage == "dubious ownership" and os.geteuid() != 0:
        pytest.skip("needs root to chown the repository to another uid")
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    write_files(repo, {"a.py": "A = 2\n"})
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real_git = git_module.GitRunner(repo).program()
    (bin_dir / "git").symlink_to(real_git)
    path = f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}"
    if breakage == "git missing" and (Path(sys.executable).parent / "git").exists():
        pytest.skip("git lives next to the Python interpreter here")
    env = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "PATH": path}
    host = HostProcess(repo, env=env).start()
    try:
        for _ in range(2):  # the second status has a last reading to guess from
            status = host.call("host/status", {})
            assert status["host"]["state"] == "ready", status["workspace"]
        if breakage == "dubious ownership":
            for path in [repo, *repo.rglob("*")]:
                os.lchown(path, 4242, 4242)
            reason = "dubious ownership"
        elif breakage == "corrupt":
            (repo / ".git" / "HEAD").write_text("garbage\n")
            reason = "not a git repository"
        else:
            (bin_dir / "git").unlink()
            reason = "git cannot be run"
        status = host.call("host/status", {})
    finally:
        assert host.stop() == 0
    assert status["host"]["state"] == "degraded"
    assert reason in status["workspace"]["staleReason"], status["workspace"]
    assert status["workspace"]["baseline"] == {"rev": "unavailable:git"}


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Snapshot]:
    """Every snapshot `host_status` is built from, in order."""
    built: list[Snapshot] = []

    def counted(ctx: HostContext, params: Any, snap: Snapshot) -> dict[str, Any]:
        built.append(snap)
        return host_status(ctx, params, snap)

    monkeypatch.setattr(results, "host_status", counted)
    return built


def _unstamped(result: dict[str, Any]) -> dict[str, Any]:
    receipt = {k: v for k, v in result["receipt"].items() if k not in STAMPS}
    return {**result, "receipt": receipt}


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("fn", [host_status, host_capabilities, host_authority_status])
def test_a_drafted_answer_is_what_building_it_after_git_gives_but_its_stamps(
    tmp_path: Path, fn: StatusLike
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    (repo / "new.py").write_text("new\n")
    ctx = build_context(repo, None, "advisory")

    async def both() -> tuple[dict[str, Any] | None, dict[str, Any]]:
        snap, drafted = await snapshot_async(ctx, lambda guess: fn(ctx, {}, guess))
        return drafted, fn(ctx, {}, snap)

    assert anyio.run(both)[0] is None, "no earlier reading: nothing drafted"
    drafted, built = anyio.run(both)
    assert drafted is not None and _unstamped(drafted) == _unstamped(built)
    assert drafted["receipt"]["baseline"]["dirty"]


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("encoded", [False, True], ids=["dict", "encoded draft"])
def test_the_drafted_receipt_is_stamped_when_git_has_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoded: bool
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    ctx = build_context(repo, None, "advisory")
    built = _counting(monkeypatch)

    async def answer() -> dict[str, Any] | EncodedJson:
        if not encoded:
            return await status_like_async(results.host_status, ctx, {})
        return await status_like_wire(results.host_status, ctx, {}, start_reading(ctx))

    anyio.run(answer)
    real = git_module.RunningGit.result_async

    answered: list[str] = []

    async def slow(self: git_module.RunningGit) -> git_module.GitResult:
        answer = await real(self)
        await anyio.sleep(0.2)  # git answers 200 ms after the draft was made
        answered.append(iso_now())
        return answer

    monkeypatch.setattr(git_module.RunningGit, "result_async", slow)
    built.clear()
    given = anyio.run(answer)
    assert len(built) == 1, "the draft was used"
    assert isinstance(given, EncodedJson) == encoded, "encoded while git ran (server's path)"
    result = json.loads(given.data) if isinstance(given, EncodedJson) else given
    receipt = result["receipt"]
    assert receipt["timing"]["elapsedMs"] >= 200
    assert receipt["issuedAt"] >= answered[0] and receipt["timing"]["endedAt"] >= answered[0]


@pytest.mark.usefixtures("settled")
def test_a_draft_from_a_guess_git_did_not_confirm_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    ctx = build_context(repo, None, "advisory")
    built = _counting(monkeypatch)
    first = anyio.run(status_like_async, results.host_status, ctx, {})
    built.clear()
    again = anyio.run(status_like_async, results.host_status, ctx, {})
    assert len(built) == 1 and again["workspace"]["baseline"] == first["workspace"]["baseline"]
    (repo / "a.py").write_text("x = 22\n")
    built.clear()
    changed = anyio.run(status_like_async, results.host_status, ctx, {})
    assert len(built) == 2, "drafted from the guess, then built from git's new answer"
    assert changed["workspace"]["baseline"]["dirty"] and built[0].state is not built[1].state
    assert changed["receipt"]["baseline"] == changed["workspace"]["baseline"]


@pytest.mark.usefixtures("settled")
def test_a_dropped_guess_lends_the_files_it_read_to_the_new_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guess's file readings were taken in this request: when git answers something else,
    only the paths the guess did not read are looked at again."""
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    write_files(repo, {"a.py": "x = 2\n", "b.py": "y = 2\n"})
    workspace = Workspace(repo)
    _read(workspace)
    _read(workspace)
    (repo / "c.py").write_text("z = 1\n")
    looked_at: list[str] = []
    real_lstat = os.lstat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if str(path).endswith(".py"):
            looked_at.append(Path(path).name)
        return real_lstat(path, *args, **kwargs)

    async def main() -> WorkTreeState:
        pending = workspace.start_state()
        try:
            assert pending.guess() is not None
            await pending.answered()
            with monkeypatch.context() as patch:
                patch.setattr(os, "lstat", counting)
                return pending.result(on_loop=True)
        finally:
            pending.close()

    state = anyio.run(main)
    assert set(state.differing) == {"a.py", "b.py", "c.py"}
    assert set(looked_at) == {"c.py"}, "a.py and b.py were read while git ran"


def test_receipt_times_are_what_datetime_writes_to_the_millisecond() -> None:
    """iso_now formats the second with datetime once and the milliseconds itself: the same text
    as datetime for every moment, rounding ties at the microsecond included."""
    from datetime import UTC, datetime

    base = 1764636421.0
    moments = [base + k / 1e6 + d for k in range(0, 2_000_000, 4999) for d in (0, 5e-7, -5e-7)]
    moments += [base + 0.9999995, base + 0.9999994, base + 0.0000005, 0.0, 1.5, time.time()]
    for moment in moments:
        expected = datetime.fromtimestamp(moment, tz=UTC).isoformat(timespec="milliseconds")
        assert iso_now(moment) == expected.replace("+00:00", "Z"), moment
