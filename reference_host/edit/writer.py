"""The only code in the project that writes workspace files (`host/applyProposal` calls it).

Each file is written atomically on its own: bytes go to a temporary file in the same directory,
are flushed to disk, take the original's permission bits, and replace the target with one
`os.replace`. A path is refused before anything is written when it is inside `.git`, when it or a
directory on the way is a symlink, or when it resolves outside the workspace. There is no
cross-file transaction: if a later file fails, the files already replaced are put back from the
bytes read before the apply (best effort), so the workspace ends byte-identical or the failure
says which path could not be restored. The guarantee reported is therefore `none`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


class WriteRefused(Exception):
    """A path the host will not write, or a write that failed (the message says which)."""


@dataclass(frozen=True)
class FileWrite:
    """New bytes for *path* (None deletes it) and the bytes it had before (None: absent)."""

    path: str
    data: bytes | None
    original: bytes | None


def check_path(root: Path, rel: str) -> Path:
    """The absolute path of *rel* if the host may write it, else WriteRefused."""
    parts = rel.split("/")
    if any(p.lower() == ".git" or p in ("", ".", "..") for p in parts):
        raise WriteRefused(f"{rel!r} is not a writable workspace path")
    real_root = root.resolve()
    current = root
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise WriteRefused(f"{rel!r} goes through a symlinked directory")
        if current.exists() and not current.is_dir():
            raise WriteRefused(f"{rel!r} goes through a file")
    full = root / rel
    if full.is_symlink():
        raise WriteRefused(f"{rel!r} is a symlink; the host does not write through links")
    if not full.parent.resolve().is_relative_to(real_root) and full.parent.exists():
        raise WriteRefused(f"{rel!r} resolves outside the workspace")
    return full


def _write_one(full: Path, data: bytes) -> None:
    mode = full.stat().st_mode & 0o7777 if full.exists() else None
    full.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=full.parent, prefix=".asp-apply-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, full)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _put(full: Path, data: bytes | None) -> None:
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            full.unlink()
    else:
        _write_one(full, data)


def write_files(root: Path, writes: list[FileWrite]) -> None:
    """Apply *writes* in order; on failure restore what was written and raise WriteRefused."""
    targets = [(w, check_path(root, w.path)) for w in writes]
    done: list[tuple[FileWrite, Path]] = []
    try:
        for write, full in targets:
            _put(full, write.data)
            done.append((write, full))
    except OSError as exc:
        unrestored = []
        for write, full in reversed(done):
            try:
                _put(full, write.original)
            except OSError:
                unrestored.append(write.path)
        detail = f"writing {write.path!r} failed: {exc.strerror or exc}"
        if unrestored:
            detail += f"; could not restore {', '.join(unrestored)}"
        raise WriteRefused(detail) from exc
