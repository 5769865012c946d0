"""Work-tree reads stay inside the workspace (reference_host/repo/workfiles.py): each directory on
the way is checked once per batch (one lstat, a realpath only for a symlink), never remembered
from one batch to the next."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reference_host.repo.workfiles import WorkFiles
from tests.host.test_host_status_guess import settled  # noqa: F401
from tests.support.gitrepo import write_files


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write_files(root, {"pkg/sub/a.txt": "a\n", "top.txt": "top\n"})
    write_files(outside, {"secret.txt": "TOKEN=1\n", "sub/a.txt": "other\n"})
    (root / "in").symlink_to(root / "pkg", target_is_directory=True)
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "pkg" / "out").symlink_to(outside, target_is_directory=True)
    return root, outside


def test_symlinked_directories_inside_are_followed_and_outside_refused(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    files = WorkFiles(root)
    found = files.hash_all(
        {p: True for p in ("top.txt", "pkg/sub/a.txt", "in/sub/a.txt", "out/secret.txt")}
        | {"pkg/out/secret.txt": False, "in/out/secret.txt": False}
    )
    assert found["top.txt"] is not None and found["pkg/sub/a.txt"] is not None
    assert found["in/sub/a.txt"] == found["pkg/sub/a.txt"], "a symlink to inside is followed"
    for path in ("out/secret.txt", "pkg/out/secret.txt", "in/out/secret.txt"):
        assert found[path] is None, path
        assert files.read(path) is None, path


def test_a_root_named_through_a_symlink_reads_inside_it(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    files = WorkFiles(alias)
    assert files.read("pkg/sub/a.txt") == b"a\n"
    assert files.read("out/secret.txt") is None


def test_a_directory_swapped_for_a_symlink_out_between_two_batches_is_refused(
    tmp_path: Path,
) -> None:
    root, outside = _tree(tmp_path)
    files = WorkFiles(root)
    assert files.hash_all({"pkg/sub/a.txt": True})["pkg/sub/a.txt"] is not None
    shutil.move(root / "pkg" / "sub", outside / "moved")  # same inode, same bytes, now outside
    (root / "pkg" / "sub").symlink_to(outside / "moved", target_is_directory=True)
    assert files.hash_all({"pkg/sub/a.txt": True})["pkg/sub/a.txt"] is None
    assert files.read("pkg/sub/a.txt") is None


def _change(root: Path, outside: Path, change: str) -> None:
    if change == "rewritten":
        (root / "pkg" / "g.txt").write_text("g, longer now\n")
    elif change == "created":
        (root / "new.txt").write_text("new\n")
    elif change == "removed":
        (root / "top.txt").unlink()
    elif change == "directory swapped for a symlink out":
        shutil.copytree(root / "pkg" / "sub", outside / "copy")
        shutil.rmtree(root / "pkg" / "sub")
        (root / "pkg" / "sub").symlink_to(outside / "copy", target_is_directory=True)
    elif change == "file swapped for a symlink":
        (root / "pkg" / "g.txt").unlink()
        (root / "pkg" / "g.txt").symlink_to(root / "top.txt")


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize(
    "change",
    [
        "nothing",
        "rewritten",
        "created",
        "removed",
        "directory swapped for a symlink out",
        "file swapped for a symlink",
    ],
)
def test_a_settled_reading_checked_again_gives_what_hashing_all_again_gives(
    tmp_path: Path, change: str
) -> None:
    """`recheck` takes only the paths whose stat (and every directory on the way) is as it was:
    with those taken, `hash_all` gives what it gives from scratch, whatever changed."""
    root, outside = _tree(tmp_path)
    write_files(root, {"pkg/g.txt": "g\n"})
    wanted = {"top.txt": True, "pkg/sub/a.txt": True, "pkg/g.txt": False, "new.txt": False}
    files = WorkFiles(root)
    found = files.hash_all(wanted)
    assert found is not None and found["new.txt"] is None
    reading = files.settle(found)
    assert reading is not None
    assert files.recheck(reading) == found, "nothing changed yet: every path taken"
    _change(root, outside, change)
    taken = files.recheck(reading)
    assert all(taken[path] == found[path] for path in taken)
    assert (len(taken) == len(found)) is (change == "nothing")
    if change == "directory swapped for a symlink out":
        assert taken == {}, "a directory on the way is not one now: nothing taken"
    fresh = WorkFiles(root).hash_all(wanted)
    assert files.hash_all(wanted, taken=taken) == fresh


def test_a_racy_digest_or_a_root_not_named_by_its_real_path_is_not_settled(
    tmp_path: Path,
) -> None:
    root, _ = _tree(tmp_path)
    files = WorkFiles(root)
    found = files.hash_all({"top.txt": True})  # just written: its digest is not kept
    assert found is not None and found["top.txt"] is not None
    assert files.settle(found) is None
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    aliased = WorkFiles(alias)
    assert aliased.settle({"missing.txt": None}) is None
