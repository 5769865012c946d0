"""A work-tree digest is reused only while the file's whole stat is unchanged and the digest was
not racy (reference_host/repo/workfiles.py): a same-size rewrite is always seen, even when its
timestamps cannot tell it apart."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from asp_protocol.canonical import blob_id
from reference_host.repo import workfiles
from reference_host.repo.workfiles import RACY_NS, Signature, WorkFiles
from reference_host.repo.workspace import Workspace
from tests.support.gitrepo import make_repo

HOUR_NS = 3600 * 1_000_000_000


def _age(path: Path, ns: int = HOUR_NS) -> int:
    """Set *path*'s mtime *ns* in the past (its ctime becomes now); returns that mtime."""
    old = time.time_ns() - ns
    os.utime(path, ns=(old, old))
    return old


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every file actually read for a digest (a reused digest reads nothing)."""
    seen: list[str] = []
    real = WorkFiles._hash_regular

    def counting(full: str, before: Signature, with_sha1: bool) -> workfiles.FileHash | None:
        seen.append(full)
        return real(full, before, with_sha1)

    monkeypatch.setattr(WorkFiles, "_hash_regular", staticmethod(counting))
    return seen


def test_a_settled_file_is_read_once_and_a_fresh_one_every_time(
    tmp_path: Path, reads: list[str]
) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    (tmp_path / "new.txt").write_text("new\n")
    (tmp_path / "future.txt").write_text("future\n")
    _age(tmp_path / "old.txt")
    os.utime(tmp_path / "future.txt", ns=(time.time_ns() + HOUR_NS,) * 2)
    # ctime is "now" for all three: old.txt's digest only becomes reusable once that settles
    files = WorkFiles(tmp_path)
    wanted = {"old.txt": True, "new.txt": True, "future.txt": True}
    first = files.hash_all(wanted)
    assert first == files.hash_all(wanted)
    assert len(reads) == 6, "a change less than RACY_NS old is never trusted to its stat"


def test_a_digest_is_reused_once_both_timestamps_have_settled(
    tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("aaaa\n")
    _age(tmp_path / "a.txt")
    files = WorkFiles(tmp_path)
    later = time.time_ns() + RACY_NS + 1_000_000  # as if read RACY_NS after the last change
    monkeypatch.setattr(workfiles.time, "time_ns", lambda: later)
    found = files.hash("a.txt")
    assert found is not None and files.hash("a.txt") == found
    assert len(reads) == 1, "settled: the second status reuses the digest"


def test_a_same_size_rewrite_with_its_mtime_put_back_is_seen(
    tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("aaaa\n")
    mtime = _age(path)
    files = WorkFiles(tmp_path)
    later = time.time_ns() + RACY_NS + 1_000_000
    monkeypatch.setattr(workfiles.time, "time_ns", lambda: later)
    before = files.hash("a.txt")
    path.write_text("bbbb\n")  # same size, same inode
    os.utime(path, ns=(mtime, mtime))  # what `cp -p` or `touch -r` leaves: only ctime moved
    after = files.hash("a.txt")
    assert before is not None and after is not None
    assert after.blob_id == blob_id(b"bbbb\n") != before.blob_id


def test_on_a_coarse_clock_a_rewrite_in_the_same_tick_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system whose timestamps only move once a second (simulated: the stat the cache
    sees is rounded down to the second, ctime included). Two same-size writes within that second
    have equal stats; the first digest was racy, so it was never kept."""

    def coarse(info: os.stat_result) -> Signature:
        second = 1_000_000_000
        mtime, ctime = info.st_mtime_ns // second * second, info.st_ctime_ns // second * second
        return (info.st_dev, info.st_ino, info.st_size, mtime, ctime)

    monkeypatch.setattr(workfiles, "signature", coarse)
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    workspace = Workspace(repo)
    (repo / "a.py").write_text("x = 2\n")
    first = workspace.state().differing["a.py"]
    (repo / "a.py").write_text("x = 3\n")
    (repo / "a.py").touch()
    second = workspace.state().differing["a.py"]
    assert (first, second) == (blob_id(b"x = 2\n"), blob_id(b"x = 3\n"))


def test_status_sees_a_same_size_edit_of_a_settled_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    (repo / "a.py").write_text("x = 2\n")
    mtime = _age(repo / "a.py")
    later = time.time_ns() + RACY_NS + 1_000_000
    monkeypatch.setattr(workfiles.time, "time_ns", lambda: later)
    workspace = Workspace(repo)
    assert workspace.state().differing == {"a.py": blob_id(b"x = 2\n")}
    (repo / "a.py").write_text("x = 3\n")
    os.utime(repo / "a.py", ns=(mtime, mtime))
    assert workspace.state().differing == {"a.py": blob_id(b"x = 3\n")}
