"""Configuration files' bytes are reused only while their whole stat is unchanged and they were not
read racily (reference_host/repo/gitconfig.py `ConfigFiles`): every change is seen, even a
same-size rewrite whose timestamps cannot tell it apart."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from reference_host.repo import gitconfig
from reference_host.repo.git import GitRunner, git_env
from reference_host.repo.gitconfig import ConfigFiles, config_key
from reference_host.repo.workfiles import RACY_NS, Signature
from tests.support.gitrepo import make_repo

HOUR_NS = 3600 * 1_000_000_000


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if every read happened more than RACY_NS after the file's last change (for files
    written within the next minute)."""
    later = time.time_ns() + RACY_NS + 60_000_000_000  # files written in the next minute too
    monkeypatch.setattr(gitconfig.time, "time_ns", lambda: later)


def _age(path: Path) -> int:
    old = time.time_ns() - HOUR_NS
    os.utime(path, ns=(old, old))
    return old


def test_a_settled_file_is_read_once_a_racy_one_every_time(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.write_text("[core]\n")
    files = ConfigFiles()
    assert files.read(str(fresh)) == files.read(str(fresh)) == b"[core]\n"
    assert files.reads == 2, "changed less than RACY_NS ago: never trusted to its stat"
    assert files.read(str(tmp_path / "absent")) is None and files.reads == 2
    assert files.read(os.devnull) == b""


@pytest.mark.usefixtures("settled")
def test_a_same_size_rewrite_with_its_mtime_put_back_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("[a]\n\tb = 1\n")
    mtime = _age(path)
    files = ConfigFiles()
    assert files.read(str(path)) == files.read(str(path)) == b"[a]\n\tb = 1\n"
    assert files.reads == 1, "settled: the second read is from memory"
    path.write_text("[a]\n\tb = 2\n")  # same size, same inode
    os.utime(path, ns=(mtime, mtime))  # only ctime moved
    assert files.read(str(path)) == b"[a]\n\tb = 2\n"
    path.unlink()
    assert files.read(str(path)) is None, "deleted: absent, not remembered"
    path.write_text("[a]\n\tb = 1\n")
    assert files.read(str(path)) == b"[a]\n\tb = 1\n"


@pytest.mark.usefixtures("settled")
def test_a_file_replaced_by_another_is_seen(tmp_path: Path) -> None:
    path, other = tmp_path / "config", tmp_path / "other"
    path.write_text("[a]\n\tb = 1\n")
    other.write_text("[a]\n\tb = 2\n")
    _age(path)
    _age(other)
    files = ConfigFiles()
    assert files.read(str(path)) == b"[a]\n\tb = 1\n"
    os.replace(other, path)  # same size, same timestamps: only the inode (and ctime) tell
    assert files.read(str(path)) == b"[a]\n\tb = 2\n"


def test_on_a_coarse_clock_a_rewrite_in_the_same_tick_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Timestamps that only move once a second (simulated, ctime included): two same-size
    writes within that second have equal stats, so the first read, racy, was never kept."""

    def coarse(info: os.stat_result) -> Signature:
        second = 1_000_000_000
        mtime, ctime = info.st_mtime_ns // second * second, info.st_ctime_ns // second * second
        return (info.st_dev, info.st_ino, info.st_size, mtime, ctime)

    monkeypatch.setattr(gitconfig, "signature", coarse)
    path = tmp_path / "config"
    path.write_text("[a]\n\tb = 1\n")
    files = ConfigFiles()
    assert files.read(str(path)) == b"[a]\n\tb = 1\n"
    path.write_text("[a]\n\tb = 2\n")
    assert files.read(str(path)) == b"[a]\n\tb = 2\n"


@pytest.mark.usefixtures("settled")
def test_the_key_through_remembered_files_is_the_key_read_afresh(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = me\n")
    env = {"HOME": str(home)}
    system = str(tmp_path / "no-system-config")
    files = ConfigFiles()
    for _ in range(2):
        assert config_key(repo, env, system, files) == config_key(repo, env, system)
    (home / ".gitconfig").write_text("[include]\n\tpath = x\n")
    assert config_key(repo, env, system, files) is None


@pytest.mark.usefixtures("settled")
def test_a_filter_written_over_a_settled_config_same_size_is_blanked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    config = repo / ".git" / "config"
    original = config.read_bytes() + b"#" * 40 + b"\n"
    config.write_bytes(original)
    mtime = _age(config)
    runner = GitRunner(repo, git_env({**os.environ, "HOME": str(tmp_path)}))
    runner.refresh_drivers()
    runner.refresh_drivers()
    assert (runner.driver_reads, runner.filtered_drivers) == (1, frozenset())
    section = b'[filter "x"]\n\tclean = y\n'
    config.write_bytes(original[: -len(section) - 1] + b"\n" + section)  # same size
    assert config.stat().st_size == len(original)
    os.utime(config, ns=(mtime, mtime))
    runner.refresh_drivers()
    assert (runner.driver_reads, runner.filtered_drivers) == (2, frozenset({"x"}))
