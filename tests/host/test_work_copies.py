"""HEAD's blob ids taken from work-tree copies that hold exactly the committed bytes: the same ids
and bytes `git cat-file` gives, git asked only for the blobs whose copy is anything else."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from reference_host.repo.workcopies import git_sha1
from reference_host.repo.workspace import Workspace
from tests.support.gitrepo import git, make_repo

FILES: dict[str, str | bytes] = {
    "clean.py": "A = 1\n",
    "pkg/clean.py": "B = 2\n",
    "edited.py": "C = 3\n",
    "grown.py": "D = 4\n",
    "linked.py": "E = 5\n",
    "fifo.py": "F = 6\n",
    "gone.py": "G = 7\n",
    "big.bin": b"\1" * 4096,
}


def _cat_file_requests(workspace: Workspace) -> list[str]:
    """The sha1s every `git cat-file --batch` of *workspace* is asked for from now on."""
    asked: list[str] = []
    stream = workspace.blobs._stream_one

    def counted(sha1s: list[str], keep: bool) -> Any:
        asked.extend(sha1s)
        return stream(sha1s, keep)

    workspace.blobs._stream_one = counted  # type: ignore[method-assign]
    return asked


def test_a_clean_tree_is_identified_without_git_reading_a_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", "off")
    repo = make_repo(tmp_path / "repo", FILES)
    from_git = Workspace(repo)
    from_git.blobs.copies = None  # every blob through git cat-file, as before
    expected = from_git.head_index(from_git.state())

    workspace = Workspace(repo)
    asked = _cat_file_requests(workspace)
    state = workspace.state()
    assert workspace.head_index(state) == expected
    assert asked == []
    assert workspace.blobs._byte_total == 0  # no blob's bytes held between snapshot and reads
    sha1 = git(repo, "rev-parse", "HEAD:pkg/clean.py").strip()
    assert workspace.git_blobs([sha1]) == {sha1: b"B = 2\n"}  # read from the copy again
    assert asked == []


def test_a_copy_edited_after_the_snapshot_is_not_served_as_the_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", "off")
    repo = make_repo(tmp_path / "repo", FILES)
    workspace = Workspace(repo)
    asked = _cat_file_requests(workspace)
    workspace.head_index(workspace.state())
    assert asked == []
    sha1 = git(repo, "rev-parse", "HEAD:clean.py").strip()
    (repo / "clean.py").write_text("A = 2\n")  # same size, other bytes
    assert workspace.git_blobs([sha1]) == {sha1: b"A = 1\n"}  # HEAD's, from git
    assert asked == [sha1]
    (repo / "clean.py").write_text("A = 1\n")  # as committed again: still git's to read
    assert workspace.git_blobs([sha1]) == {sha1: b"A = 1\n"}


def test_a_copy_that_is_not_the_committed_blob_is_left_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", "off")
    repo = make_repo(tmp_path / "repo", FILES)
    head = {name: git(repo, "rev-parse", f"HEAD:{name}").strip() for name in FILES}
    (repo / "edited.py").write_text("C = 9\n")  # same size, other bytes
    (repo / "grown.py").write_text("D = 4\nD += 1\n")
    (repo / "linked.py").unlink()
    (repo / "linked.py").symlink_to("clean.py")  # a link, even to committed bytes: not read
    (repo / "fifo.py").unlink()
    os.mkfifo(repo / "fifo.py")  # never opened for waiting
    (repo / "gone.py").unlink()

    workspace = Workspace(repo, max_blob_bytes=1024)  # big.bin is over the cap
    asked = _cat_file_requests(workspace)
    index = workspace.head_index(workspace.state())

    not_copies = {"edited.py", "grown.py", "linked.py", "fifo.py", "gone.py", "big.bin"}
    assert sorted(asked) == sorted(head[name] for name in not_copies)
    for name, content in FILES.items():
        data = content.encode() if isinstance(content, str) else content
        assert index[name] == blob_id(data), name  # HEAD's bytes, never the work tree's
        assert git_sha1(data) == head[name]
    assert workspace.git_blobs([head["edited.py"]]) == {head["edited.py"]: b"C = 3\n"}
