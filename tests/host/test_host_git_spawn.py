"""How the host starts git (reference_host/repo/spawn.py): its own git, found on PATH's absolute
entries only, with /dev/null or the given bytes as input, both outputs read without a deadlock,
and default signal dispositions."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from pathlib import Path

import anyio
import pytest

from reference_host.repo.spawn import EncodedEnv, find_program, spawn_run, spawn_start
from reference_host.repo.workspace import Workspace
from tests.support.gitrepo import make_repo

SH = "/bin/sh"


def _env() -> dict[bytes, bytes]:
    return EncodedEnv().get({"PATH": os.environ["PATH"], "LC_ALL": "C"})


def test_large_input_and_both_outputs_are_carried_whole() -> None:
    data = os.urandom(1 << 20)  # past any pipe buffer in both directions at once
    done = spawn_run(SH, ["sh", "-c", "cat; echo done >&2; exit 3"], _env(), data)
    assert (done.returncode, done.stdout, done.stderr) == (3, data, b"done\n")


def test_without_input_the_child_reads_dev_null_and_signals_are_default() -> None:
    script = "readlink /proc/self/fd/0; grep '^SigIgn:\\|^SigBlk:' /proc/self/status; cat"
    done = spawn_run(SH, ["sh", "-c", script], _env())
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "/dev/null", "never the host's own request pipe"
    masks = dict(line.split(":\t") for line in lines[1:])
    pipe_bit = 1 << (signal.SIGPIPE - 1)
    assert int(masks["SigIgn"], 16) & pipe_bit == 0, "SIGPIPE is not inherited as ignored"
    assert int(masks["SigBlk"], 16) == 0


def test_empty_input_closes_stdin_and_a_child_that_stops_reading_is_not_waited_on() -> None:
    assert spawn_run(SH, ["sh", "-c", "cat"], _env(), b"").stdout == b""
    done = spawn_run(SH, ["sh", "-c", "exit 0"], _env(), b"x" * (4 << 20))
    assert done.returncode == 0


def test_a_missing_program_raises_os_error() -> None:
    with pytest.raises(OSError):
        spawn_run("/nonexistent/git", ["git"], _env())


def _planted_git(repo: Path) -> Path:
    """An executable named `git` at the repository root that logs each run outside the tree."""
    log = repo.parent / "planted.log"
    fake = repo / "git"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 0\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return log


@pytest.mark.parametrize("relative", [".", ""])
def test_a_git_planted_in_the_repository_never_runs_through_a_relative_path_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, relative: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    log = _planted_git(repo)
    path = f"{relative}{os.pathsep}{os.environ['PATH']}"
    subprocess.run(["git", "status"], cwd=repo, env={**os.environ, "PATH": path}, check=False)
    assert log.exists(), "the trap is live: a PATH lookup from the repository finds it"
    log.unlink()
    monkeypatch.setenv("PATH", path)
    assert find_program("git", {"PATH": path}) != str(repo / "git")
    (repo / "a.py").write_text("x = 2\n")
    state = Workspace(repo).state()
    assert state.unusable is None and set(state.differing) == {"a.py", "git"}
    assert not log.exists(), "the host ran the repository's own git"


def test_git_missing_from_path_is_unusable_and_found_again_once_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    real = find_program("git", os.environ)
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    workspace = Workspace(repo)
    state = workspace.state()
    assert state.unusable is not None and "git cannot be run" in state.unusable
    (bin_dir / "git").symlink_to(real)
    state = workspace.state()
    assert state.unusable is None and state.tree is not None


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_on_the_event_loop_both_outputs_are_read_to_their_end() -> None:
    script = "head -c 1000000 /dev/zero; head -c 300000 /dev/zero >&2; exit 5"

    async def run() -> None:
        done = await spawn_start(SH, ["sh", "-c", script], _env()).finish_async()
        assert (done.returncode, len(done.stdout), len(done.stderr)) == (5, 1000000, 300000)

    before = _open_fds()
    anyio.run(run)
    assert _open_fds() == before


def test_a_cancelled_wait_on_the_loop_kills_and_reaps_the_child() -> None:
    pids: list[int] = []

    async def run() -> None:
        child = spawn_start(SH, ["sh", "-c", "sleep 30"], _env())
        pids.append(child.pid)
        with anyio.move_on_after(0.2):
            await child.finish_async()
        child.close()

    before = _open_fds()
    anyio.run(run)
    assert _open_fds() == before
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[0], os.WNOHANG)  # already reaped: no zombie left behind


def test_a_descriptor_left_inheritable_does_not_reach_the_child() -> None:
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)
    try:
        done = spawn_run(SH, ["sh", "-c", "ls /proc/self/fd"], _env())
    finally:
        os.close(read_end)
        os.close(write_end)
    seen = {int(name) for name in done.stdout.split()}
    assert write_end not in seen and {0, 1, 2} <= seen


def test_git_runs_with_the_environment_and_overrides_as_they_are_now(tmp_path: Path) -> None:
    """The encoded environment is kept between git starts, so a changed base environment or a
    changed driver override must reach the next git."""
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    runner = Workspace(repo).runner
    config = tmp_path / "global.gitconfig"
    config.write_text("[user]\n\tname = changed-env\n")
    assert b"changed-env" not in runner.run("config", "--global", "user.name").stdout
    runner.env = {**runner.env, "GIT_CONFIG_GLOBAL": str(config)}
    assert runner.run("config", "--global", "user.name").stdout == b"changed-env\n"
    runner.env["GIT_CONFIG_GLOBAL"] = os.devnull  # mutated in place
    assert runner.run("config", "--global", "user.name").stdout == b""
    runner.driver_overrides = (("filter.x.clean", "changed-override"),)
    assert runner.run("config", "filter.x.clean").stdout == b"changed-override\n"
