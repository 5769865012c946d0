"""A configuration change between two `host/status` calls is seen: the host reuses its reading of
the configured driver names only while every file git would read is byte-identical
(reference_host/repo/gitconfig.py, docs/workspace-git.md).

The repository commits `filtered.txt` through an upper-casing clean filter, so its work-tree
bytes differ from HEAD while git's stat cache calls it clean. Once a configuration file defines
that filter, an honest host blanks it (the marker never runs) and compares the file byte for byte
(reported modified). A host that kept its earlier reading (no driver) would call the file clean.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reference_host.repo.git import GitRunner, git_env
from reference_host.repo.gitconfig import CONFIG_BYTES, config_key, system_config_path
from tests.support.gitrepo import git, make_repo, write_files
from tests.support.host_harness import HostProcess
from tests.support.hostile_repo import marker, marker_runs


def _repo(root: Path) -> Path:
    """`filtered.txt` committed shouted (through `tr`); `other.txt` has the same attribute."""
    repo = make_repo(root / "repo", {".gitattributes": "*.txt filter=upper\n", "a.py": "A = 1\n"})
    write_files(repo, {"filtered.txt": "shouting\n", "other.txt": "QUIET\n"})
    git(repo, "-c", "filter.upper.clean=tr a-z A-Z", "add", "filtered.txt", "other.txt")
    git(repo, "commit", "-q", "-m", "filtered files")
    for name in ("filtered.txt", "other.txt"):  # not racily clean: git trusts its stat cache
        info = (repo / name).stat()
        os.utime(repo / name, ns=(info.st_atime_ns, info.st_mtime_ns - 10_000_000_000))
    git(repo, "-c", "filter.upper.clean=tr a-z A-Z", "update-index", "--refresh")
    return repo


def _filter_config(mark: Path) -> str:
    return f'[filter "upper"]\n\tclean = {mark} clean\n\tprocess = {mark} process\n'


def _changes(host: HostProcess) -> dict[str, str]:
    working = host.call("host/workingChangeset", {})
    return {c["path"]: c["kind"] for c in working["changeset"]["changes"]}


def _prove_trap_and_reset(repo: Path, env: dict[str, str]) -> None:
    """A stat-dirty `other.txt` makes a plain git run the clean filter: the trap is live."""
    info = (repo / "other.txt").stat()
    os.utime(repo / "other.txt", ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
    argv = ["git", "--no-optional-locks", "status", "--porcelain"]
    subprocess.run(argv, cwd=repo, env=env, capture_output=True, check=False)
    assert marker_runs(repo), "an unprotected git status runs the newly configured filter"
    (repo.parent / "marker.log").unlink()


@pytest.mark.parametrize("where", ["repository", "global"])
def test_a_filter_driver_added_between_two_statuses_is_blanked(tmp_path: Path, where: str) -> None:
    repo = _repo(tmp_path)
    mark = marker(tmp_path)
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text("[user]\n\tname = someone\n")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(global_config)}
    host = HostProcess(repo, env={"GIT_CONFIG_GLOBAL": str(global_config)}).start()
    try:
        host.call("host/status", {})
        assert "filtered.txt" not in _changes(host), "no filter configured yet: git's answer"
        target = repo / ".git" / "config" if where == "repository" else global_config
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(_filter_config(mark))
        _prove_trap_and_reset(repo, env)
        host.call("host/status", {})
        changes = _changes(host)
    finally:
        assert host.stop() == 0
    assert marker_runs(repo) == []
    assert changes.get("filtered.txt") == "modify", "the new filter is known, so compared bytewise"


def test_an_include_added_then_its_target_changed_is_followed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    mark = marker(tmp_path)
    included = tmp_path / "included.cfg"
    included.write_text("# nothing yet\n")
    host = HostProcess(repo).start()
    try:
        host.call("host/status", {})
        with open(repo / ".git" / "config", "a", encoding="utf-8") as handle:
            handle.write(f"[include]\n\tpath = {included}\n")
        host.call("host/status", {})
        assert "filtered.txt" not in _changes(host), "the included file defines nothing yet"
        included.write_text(_filter_config(mark))  # only the included file changes
        _prove_trap_and_reset(repo, dict(os.environ))
        host.call("host/status", {})
        changes = _changes(host)
    finally:
        assert host.stop() == 0
    assert marker_runs(repo) == []
    assert changes.get("filtered.txt") == "modify"


def test_driver_names_are_reused_only_while_the_configuration_is_unchanged(
    tmp_path: Path,
) -> None:
    main = make_repo(tmp_path / "main", {"a.py": "A = 1\n"})
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    runner = GitRunner(tmp_path / "linked", git_env({**os.environ, "HOME": str(tmp_path)}))
    runner.refresh_drivers()
    runner.refresh_drivers()
    assert (runner.driver_reads, runner.filtered_drivers) == (1, frozenset())
    with open(main / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write('[filter "late"]\n\tclean = false\n')  # the linked tree's common config
    runner.refresh_drivers()
    assert (runner.driver_reads, runner.filtered_drivers) == (2, frozenset({"late"}))
    (tmp_path / ".gitconfig").write_text("[include]\n\tpath = /nonexistent\n")
    runner.refresh_drivers()
    runner.refresh_drivers()
    assert runner.driver_reads == 4, "a configuration with an include is read again every time"


def test_no_key_when_a_config_file_cannot_be_settled(tmp_path: Path) -> None:
    """A FIFO (never opened blocking), an oversized file or an include: git is asked every time."""
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    system = str(tmp_path / "no-system-config")
    assert config_key(repo, env, system) is not None
    assert config_key(repo, env, None) is None, "git did not say where its system file is"
    assert config_key(repo, {**env, "GIT_CONFIG_GLOBAL": os.devnull}, system) is not None
    os.mkfifo(home / ".gitconfig")
    assert config_key(repo, env, system) is None
    (home / ".gitconfig").unlink()
    (home / ".gitconfig").write_text("# " + "x" * CONFIG_BYTES + "\n")
    assert config_key(repo, env, system) is None
    (home / ".gitconfig").write_text("[Include]\n\tpath = elsewhere\n")
    assert config_key(repo, env, system) is None


@pytest.mark.parametrize(
    ("stdout", "stderr", "code", "expected"),
    [
        ("file:/etc/gitconfig\\0core.x\\ny\\0", "", 0, "/etc/gitconfig"),
        (
            "",
            "fatal: unable to read config file '/opt/git/etc/gitconfig': No such file",
            128,
            "/opt/git/etc/gitconfig",
        ),
        ("", "", 0, None),  # an existing file with no key: git does not name it
    ],
)
def test_the_system_file_is_where_git_says(
    tmp_path: Path, stdout: str, stderr: str, code: int, expected: str | None
) -> None:
    fake = tmp_path / "fake-git"
    fake.write_text(f"#!/bin/sh\nprintf '{stdout}'\nprintf \"{stderr}\" >&2\nexit {code}\n")
    fake.chmod(0o755)
    assert system_config_path([str(fake)], {"PATH": os.environ["PATH"]}, tmp_path) == expected
