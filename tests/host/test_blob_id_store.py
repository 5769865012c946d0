"""Blob ids kept across restarts: a second host's snapshot reads no blob, and a damaged, foreign or
planted store file costs a re-read or a missing blob, never wrong bytes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from reference_host.evaluate.evaluation import evaluate_changeset
from reference_host.helpers import working_changeset
from reference_host.repo import blob_id_store, gitblobs
from reference_host.repo.blob_id_store import BlobIdStore, store_for
from reference_host.repo.git import GitUnusable
from reference_host.repo.workspace import Workspace
from tests.host.test_inspect_host import host
from tests.support.gitrepo import git, make_repo

FILES = {"a.py": "A = 1\n", "pkg/b.py": "B = 2\n", "docs/c.txt": "text\n"}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", str(root))
    return root


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


def _store_file(cache: Path) -> Path:
    files = list((cache / "host-blob-ids").glob("*.ids"))
    assert len(files) == 1, files
    return files[0]


@pytest.mark.usefixtures("cache")
def test_a_second_workspace_takes_the_ids_from_the_store_without_reading_a_blob(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    first = Workspace(repo)
    ids = first.head_index(first.state())
    assert ids == {path: blob_id(text.encode()) for path, text in FILES.items()}
    second = Workspace(repo)
    reads = _counting_reads(second)
    state = second.state()
    assert second.head_index(state) == ids
    assert reads == [], "the store answered every id"
    # a new commit: only its new blob is read, and the store grows
    (repo / "a.py").write_text("A = 3\n")
    git(repo, "commit", "-qam", "more")
    third = Workspace(repo)
    reads = _counting_reads(third)
    assert third.head_index(third.state())["a.py"] == blob_id(b"A = 3\n")
    assert len(reads) == 1
    assert len(BlobIdStore(store_for(repo).path).load()) == 4  # type: ignore[union-attr]


def test_a_damaged_or_foreign_store_file_is_ignored_whole(tmp_path: Path, cache: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    first = Workspace(repo)
    ids = first.head_index(first.state())
    path = _store_file(cache)
    good = path.read_bytes()
    assert len(BlobIdStore(path).load()) == 3
    for damaged in (good[:-1], good[:40], good[:-5] + b"\0" * 5, b"", b"not a store"):
        path.write_bytes(damaged)
        assert BlobIdStore(path).load() == []
    path.write_bytes(good)
    os.chmod(path, 0o666)
    assert BlobIdStore(path).load() == [], "a file others may write is not trusted"
    os.chmod(path, 0o600)
    # a workspace over a damaged store reads the blobs again and gets the same ids
    path.write_bytes(good[:-1])
    again = Workspace(repo)
    reads = _counting_reads(again)
    assert again.head_index(again.state()) == ids
    assert len(reads) == 1
    assert BlobIdStore(path).load(), "and writes a good store back"


@pytest.mark.usefixtures("cache")
def test_a_planted_wrong_id_is_a_missing_blob_never_other_bytes(tmp_path: Path) -> None:
    """Someone who can write the cache maps a.py's git sha1 to the id of other content: a provider
    asking for that id gets nothing (the host hashes what it serves), not a.py's bytes."""
    repo = make_repo(tmp_path / "repo", FILES)
    first = Workspace(repo)
    first.head_index(first.state())
    store = store_for(repo)
    assert store is not None
    sha1 = git(repo, "rev-parse", "HEAD:a.py").strip()
    planted = blob_id(b"CLEAN = True\n")
    entries = [(s, planted if s == sha1 else i, n) for s, i, n in store.load()]
    store.save(entries)
    second = Workspace(repo)
    state = second.state()
    assert second.head_index(state)["a.py"] == planted  # the claim a planted file can make ...
    assert second.resolve(planted, ["a.py"], state.tree) is None  # ... but never the bytes


def test_the_store_is_bounded_and_old_files_are_pruned(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(blob_id_store, "MAX_ENTRIES", 2)
    monkeypatch.setattr(blob_id_store, "MAX_FILES", 2)
    store = BlobIdStore(cache / "host-blob-ids" / "x.ids")
    entries = [(f"{n:040x}", blob_id(str(n).encode()), n) for n in range(5)]
    store.save(entries)
    assert store.load() == entries[-2:], "the newest entries are kept"
    for name in ("y", "z"):
        BlobIdStore(cache / "host-blob-ids" / f"{name}.ids").save(entries)
        os.utime(cache / "host-blob-ids" / f"{name}.ids")
    assert len(list((cache / "host-blob-ids").glob("*.ids"))) == 2


def test_no_store_when_caching_is_off_or_the_cache_is_inside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", "off")
    assert store_for(repo) is None
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", str(repo / ".cache"))
    assert store_for(repo) is None
    workspace = Workspace(repo)
    workspace.head_index(workspace.state())
    assert not (repo / ".cache").exists(), "the workspace stays byte-identical"


def test_a_long_list_is_read_by_two_git_processes_into_the_same_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASP_HOST_CACHE_DIR", "off")
    files: dict[str, str | bytes] = {f"m{n}.py": f"N = {n}\n" for n in range(9)}
    files["big.bin"] = b"\0" * 4096
    repo = make_repo(tmp_path / "repo", files)
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
