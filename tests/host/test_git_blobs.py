"""Reading committed blobs: two git streams for a long list, a failure in either fails the read,
and an evaluation of changed files alone never takes the whole snapshot's ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reference_host.evaluate.evaluation import evaluate_changeset
from reference_host.helpers import working_changeset
from reference_host.repo import gitblobs
from reference_host.repo.git import GitUnusable
from reference_host.repo.workspace import Workspace
from tests.host.test_inspect_host import host
from tests.support.gitrepo import git, make_repo


def _counting_reads(workspace: Workspace) -> list[tuple[str, ...]]:
    """Every `git cat-file` the workspace's runner starts from now on."""
    started: list[tuple[str, ...]] = []
    popen = workspace.runner.popen

    def counted(*args: str, **kw: Any) -> Any:
        if args and args[0] == "cat-file":
            started.append(args)
        return popen(*args, **kw)

    workspace.runner.popen = counted  # type: ignore[method-assign]
    return started


def test_a_long_list_is_read_by_two_git_processes_into_the_same_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", "off")
    files: dict[str, str | bytes] = {f"m{n}.py": f"N = {n}\n" for n in range(9)}
    files["big.bin"] = b"\0" * 4096
    repo = make_repo(tmp_path / "repo", files)
    for name in files:  # every work-tree copy differs from HEAD: git must read every blob
        (repo / name).write_bytes(b"# edited\n")
    single = Workspace(repo)
    expected = single.head_index(single.state())
    monkeypatch.setattr(gitblobs, "_SPLIT_AT", 4)
    split = Workspace(repo, max_blob_bytes=1024)  # big.bin over the cap: identified, not kept
    reads = _counting_reads(split)
    state = split.state()
    assert split.head_index(state) == expected
    assert len(reads) == 2
    assert split.git_blobs([git(repo, "rev-parse", "HEAD:m3.py").strip()]) != {}
    assert split.oversize(expected["big.bin"], ["big.bin"], state.tree) == 4096


def test_git_failing_in_the_second_reader_fails_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", "off")
    repo = make_repo(tmp_path / "repo", {f"m{n}.py": f"N = {n}\n" for n in range(6)})
    monkeypatch.setattr(gitblobs, "_SPLIT_AT", 4)
    workspace = Workspace(repo)
    state = workspace.state()
    sha1s = [sha1 for _, sha1 in workspace.tree_entries(state.tree).values()]
    one = workspace.blobs._stream_one

    def second_fails(part: list[str], keep: bool) -> dict[str, bytes]:
        if part[0] == sha1s[len(sha1s) // 2]:
            raise GitUnusable("git cat-file ended early")
        return one(part, keep)

    monkeypatch.setattr(workspace.blobs, "_stream_one", second_fails)
    with pytest.raises(GitUnusable):
        workspace.blob_ids_of(sha1s)


@pytest.mark.anyio
async def test_an_evaluation_of_changed_files_alone_reads_no_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check reads only the change's blobs: the host must not take the whole snapshot's ids
    to serve them (on Home Assistant that was every blob of the tree read and hashed, 3-5 s)."""
    files: dict[str, str | bytes] = {f"pkg/m{n}.py": f"N = {n}\n" for n in range(30)}
    repo = make_repo(tmp_path / "repo", files)
    (repo / "pkg/m3.py").write_text("N = 33\n")
    snapshots: list[str] = []
    head_index = Workspace.head_index

    def counted(self: Workspace, state: Any) -> dict[str, str]:
        snapshots.append(str(state.tree))
        return head_index(self, state)

    monkeypatch.setattr(Workspace, "head_index", counted)
    async with host(repo) as ctx:
        change = working_changeset(ctx, {})["changeset"]
        params = {"callSite": "gate", "changeset": change, "comparison": "introduced"}
        result = await evaluate_changeset(ctx, params, None)
    assert result["decision"] == "allow", result["coverage"]
    assert result["coverage"]["ran"] == ["python-check"]
    assert snapshots == [], "the whole snapshot was read for a one-file change"
