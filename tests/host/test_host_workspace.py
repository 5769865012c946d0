"""Baselines, blob ids and blob resolution (docs/architecture.md#wire-and-digests), read-only, on real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from asp_protocol.canonical import blob_id, digest
from asp_protocol.changesets import PathError, validate_path
from reference_host.repo.workspace import Workspace, WorkTreeState
from tests.support.gitrepo import git, make_repo, snapshot_tree, write_files


def test_clean_tree_baseline_is_head_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n", "pkg/b.py": "B = 1\n"})
    state = Workspace(repo).state()
    assert state.baseline() == {"rev": "git:tree:" + git(repo, "rev-parse", "HEAD^{tree}").strip()}
    assert state.dirty is None


def test_dirty_is_digest_of_differing_paths(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "r", {"a.py": "A = 1\n", "gone.py": "G = 1\n", "same.py": "S = 1\n"}
    )
    write_files(repo, {"a.py": "A = 2\n", "new.py": "N = 1\n", "same.py": "S = 1\n"})
    (repo / "gone.py").unlink()
    (repo / ".gitignore").write_text("ignored.txt\n")
    (repo / "ignored.txt").write_text("x")
    before = snapshot_tree(repo)
    state = Workspace(repo).state()
    expected = sorted(
        [
            [".gitignore", blob_id(b"ignored.txt\n")],
            ["a.py", blob_id(b"A = 2\n")],
            ["gone.py", None],
            ["new.py", blob_id(b"N = 1\n")],
        ]
    )
    assert state.dirty == digest(expected)
    assert snapshot_tree(repo) == before, "reading the baseline writes nothing"


def test_the_dirty_digest_is_the_canonical_digest_whatever_the_names() -> None:
    """The digest's JSON is written by the compact encoder: the canonical bytes for strings and
    nulls, whatever characters the names hold."""
    names = ["plain.py", "é/ü.py", 'quote".py', "tab\t.py", "ctl\x01.py", "emoji😀.py", "z"]
    differing = {name: (blob_id(name.encode()) if n % 3 else None) for n, name in enumerate(names)}
    uncarried = {"back\\slash.py": "not a valid ChangeSet path", "b\\xff.py": "not UTF-8"}
    state = WorkTreeState("t", "git:tree:t", {}, differing, uncarried=uncarried)
    pairs: list[list[str | None]] = [[path, blob] for path, blob in differing.items()]
    pairs += [[f"uncarried:{path}", None] for path in uncarried]
    assert state.dirty == digest(sorted(pairs, key=lambda pair: str(pair[0])))


def test_blob_resolution_sources(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n"})
    write_files(repo, {"a.py": "A = 2\n"})
    workspace = Workspace(repo)
    state = workspace.state()
    assert workspace.resolve(blob_id(b"A = 1\n"), ["a.py"], state.tree) == b"A = 1\n", (
        "baseline tree"
    )
    assert workspace.resolve(blob_id(b"A = 2\n"), ["a.py"], state.tree) == b"A = 2\n", (
        "hash-checked work tree"
    )
    assert workspace.resolve(blob_id(b"A = 3\n"), ["a.py"], state.tree) is None, "never a guess"
    uploaded = workspace.put_blob(b"A = 3\n")
    assert workspace.resolve(uploaded, [], state.tree) == b"A = 3\n", "uploads"
    assert workspace.head_blob_id(state, "a.py") == blob_id(b"A = 1\n")
    assert workspace.snapshot_index(state, with_dirty=True)["a.py"] == blob_id(b"A = 2\n")


def test_uploads_are_bounded_oldest_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Uploaded blobs live in host memory: a harness cannot grow it without bound."""
    monkeypatch.setattr("reference_host.repo.workspace.UPLOAD_BYTES_LIMIT", 100)
    workspace = Workspace(make_repo(tmp_path / "r", {"a.py": "A = 1\n"}))
    state = workspace.state()
    ids = [workspace.put_blob(bytes([n]) * 40) for n in range(5)]
    assert sum(len(b) for b in workspace.uploads.values()) <= 100
    assert workspace.resolve(ids[-1], [], state.tree) == bytes([4]) * 40, "the newest is kept"
    assert workspace.resolve(ids[0], [], state.tree) is None, "the oldest is evicted, never guessed"


def test_work_tree_reads_never_follow_a_directory_symlink_out_of_the_workspace(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    write_files(outside, {"secret.txt": "TOKEN=1\n"})
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n"})
    (repo / "link").symlink_to(outside, target_is_directory=True)
    workspace = Workspace(repo)
    state = workspace.state()
    assert workspace.read_work_file("link/secret.txt") is None
    secret = blob_id(b"TOKEN=1\n")
    assert workspace.resolve(secret, ["link/secret.txt"], state.tree) is None


def test_unmerged_path_compares_with_head_not_the_merge_base(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n"})
    git(repo, "checkout", "-q", "-b", "side")
    write_files(repo, {"a.py": "A = 'side'\n"})
    git(repo, "commit", "-q", "-am", "side")
    git(repo, "checkout", "-q", "-")
    write_files(repo, {"a.py": "A = 'main'\n"})
    git(repo, "commit", "-q", "-am", "main")
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "merge", "-q", "side")
    workspace = Workspace(repo)
    state = workspace.state()
    head = git(repo, "rev-parse", "HEAD:a.py").strip()
    assert state.head_sha1["a.py"] == head, "before = HEAD's blob (stage 2), not the merge base"


def test_plain_directory_baseline(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, {"a.txt": "x", "d/b.txt": "y"})
    state = Workspace(root).state()
    listing = sorted([["a.txt", blob_id(b"x")], ["d/b.txt", blob_id(b"y")]])
    assert state.baseline() == {"rev": "tree:" + digest(listing)}
    assert state.rev.startswith("tree:sha256:")


@pytest.mark.parametrize(
    "bad", ["", "/etc/passwd", "../x", "a/../b", ".git/config", "a//b", "a\\b", "C:/x"]
)
def test_path_validation_rejects(bad: str) -> None:
    with pytest.raises(PathError):
        validate_path(bad)


def test_path_validation_accepts_normal_paths() -> None:
    assert validate_path("src/pkg/mod.py") == "src/pkg/mod.py"
    assert validate_path(".asp/asp.json") == ".asp/asp.json"


@pytest.mark.parametrize("case", ["corrupt", "bare", "worktree-elsewhere"])
def test_a_repository_git_cannot_use_is_unusable_never_plain(tmp_path: Path, case: str) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n"})
    if case == "corrupt":
        (repo / ".git" / "HEAD").write_text("garbage\n")
    elif case == "bare":
        repo = tmp_path / "bare.git"
        git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "r"), str(repo))
    else:
        git(repo, "config", "core.worktree", str(tmp_path))  # the repository points elsewhere
    workspace = Workspace(repo)
    state = workspace.state()
    assert workspace.mode == "unusable" and state.unusable, state
    assert state.vcs and state.differing == {} and state.rev == "unavailable:git"
