"""Real git work trees in temporary directories, for tests that need a workspace."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "asp-test",
    "GIT_AUTHOR_EMAIL": "asp-test@example.invalid",
    "GIT_COMMITTER_NAME": "asp-test",
    "GIT_COMMITTER_EMAIL": "asp-test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo)}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_repo(root: Path, files: dict[str, str | bytes], *, commit: bool = True) -> Path:
    """Create a git repository at *root* holding *files*, committed unless told otherwise."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write_files(root, files)
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
    return root


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file's bytes (outside .git), to prove a test left the work tree byte-identical.

    `.git` is pruned from the walk, not filtered after it: git may pack loose objects in the
    background (auto gc after a large set-up commit), and a walk inside `.git` then meets
    directories that vanish under it."""
    files: dict[str, bytes] = {}
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != ".git"]
        for name in names:
            path = Path(directory) / name
            if name != ".git" and path.is_file():  # a `.git` file (worktree link) is git's too
                files[str(path.relative_to(root))] = path.read_bytes()
    return dict(sorted(files.items()))
