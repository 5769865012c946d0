"""Index entries `git status` is told not to look at, so the host looks at them itself.

`git update-index --assume-unchanged PATH` (and `--skip-worktree`, which sparse checkouts set)
makes git stop comparing that file with the work tree: a later edit never shows in
`git status`, so a host reading only git's answer would see an unchanged file and could allow
a change nobody checked. Such paths are added to the status candidates (`Workspace` compares
every candidate's bytes with HEAD itself), so an edit under either flag is part of the working
change like any other. A skip-worktree entry whose file is absent is a path a sparse checkout
left out, not a deletion, and is skipped; an assume-unchanged file that is gone was deleted.

The flags live in the index, which changes only when git writes it, so the list is read with
`git ls-files -v` once per version of the index file (its inode, size and times); a status pays
one `stat` of the index otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

from reference_host.repo.git import GitRunner, GitUnusable
from reference_host.repo.gitblobs import BlobReader
from reference_host.repo.gitstatus import NeedsReading

Identity = tuple[int, int, int, int] | None


def _identity(path: Path | None) -> Identity:
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def flagged(listing: bytes, root: Path) -> list[str]:
    """The paths of `git ls-files -v -z` output that git status skips: a lowercase tag
    (assume-unchanged), or `S` (skip-worktree) with the file present in the work tree."""
    paths = []
    for record in listing.split(b"\0"):
        if len(record) < 3 or record[1:2] != b" ":
            continue
        tag, name = record[:1], os.fsdecode(record[2:])
        if tag.islower() or (tag == b"S" and os.path.lexists(root / name)):
            paths.append(name)
    return paths


class HiddenEntries:
    """The flagged paths of one repository's index, re-read when the index file changes."""

    def __init__(self, runner: GitRunner, root: Path, blobs: BlobReader) -> None:
        self._runner, self._root, self._blobs = runner, root, blobs
        self._index: Path | None = None
        self._seen: Identity = None
        self._paths: list[str] = []
        self._read = False

    def fresh(self) -> bool:
        """Whether the list read last is still the index's (one stat)."""
        return self._read and _identity(self._index) == self._seen

    def candidates(
        self, tree: str, known: dict[str, str | None], on_loop: bool
    ) -> dict[str, str | None]:
        """Flagged paths not in *known*, each with its sha1 in *tree* (HEAD's; None when it lacks
        the path). `on_loop`: raises `NeedsReading` rather than run git (the usual index has no
        flagged path, and then neither git nor the tree is asked)."""
        if not self.fresh():
            if on_loop:
                raise NeedsReading
            self._reread()
        hidden = [path for path in self._paths if path not in known]
        if not hidden:
            return {}
        if on_loop:
            raise NeedsReading  # the tree's entries may need `git ls-tree`
        entries = self._blobs.tree_entries(tree)
        return {path: entries[path][1] if path in entries else None for path in hidden}

    def _reread(self) -> None:
        if self._index is None:
            where = self._runner.run("rev-parse", "--git-path", "index")
            if not where.ok:
                raise GitUnusable(where.reason())
            self._index = self._root / os.fsdecode(where.stdout.rstrip(b"\n"))
        seen = _identity(self._index)  # before reading: a write meanwhile is seen next time
        listing = self._runner.run("ls-files", "-v", "-z")
        if not listing.ok:
            raise GitUnusable(listing.reason())
        self._paths, self._seen, self._read = flagged(listing.stdout, self._root), seen, True
