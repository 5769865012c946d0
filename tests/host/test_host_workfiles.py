"""Work-tree reads stay inside the workspace (reference_host/repo/workfiles.py): each directory on
the way is checked once per batch (one lstat, a realpath only for a symlink), never remembered
from one batch to the next."""

from __future__ import annotations

import shutil
from pathlib import Path

from reference_host.repo.workfiles import WorkFiles
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
