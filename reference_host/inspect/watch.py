"""Has anything in the work tree changed since the last `git status`? (Linux inotify, via ctypes.)

Reading the work-tree state costs a `git status`, which grows with the repository. A watcher on
every directory of the work tree (and `.git` with its refs) lets a query reuse the last state
when the kernel reported no event at all since it was read: a write that finished before the
query started is already queued, so reuse is never stale. Where inotify is unavailable, or the
tree has more directories than `MAX_WATCHES`, `unchanged()` is always False (read afresh).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
# modify, attrib, close-write, moved-from/to, create, delete, delete-self, move-self
MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
MAX_WATCHES = 20_000
SKIP_IN_GIT = {"objects", "logs", "hooks", "info", "lfs", "modules", "worktrees"}


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        _ = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None
    return libc


class TreeWatcher:
    """inotify watches on the work tree's directories; `unchanged()` drains and tells."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._libc = _libc()
        self._fd = -1
        self._armed = False

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._armed = -1, False

    def _directories(self) -> list[Path] | None:
        found: list[Path] = []
        for directory, dirnames, _files in os.walk(self.root):
            if Path(directory) == self.root / ".git":
                dirnames[:] = [d for d in dirnames if d not in SKIP_IN_GIT]
            found.append(Path(directory))
            if len(found) > MAX_WATCHES:
                return None
        return found

    def arm(self) -> None:
        """(Re)start watching, before the state is read: events during the read count next time."""
        self.close()
        if self._libc is None:
            return
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return
        directories = self._directories()
        if directories is None:
            os.close(fd)
            return
        for directory in directories:
            if self._libc.inotify_add_watch(fd, os.fsencode(directory), MASK) < 0:
                os.close(fd)
                log.info("inotify watch failed on %s; reading the state afresh", directory)
                return
        self._fd, self._armed = fd, True

    def unchanged(self) -> bool:
        """True only when watching and the kernel queued no event since `arm()`."""
        if not self._armed:
            return False
        try:
            os.read(self._fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            pass
        self._armed = False  # something happened: the next read re-arms
        return False
