"""A child's whole process tree, found and ended: nothing a bridge or a host started outlives it.

Shared by the bridge's host client (a host process) and the reference host (a provider process).
The child runs in its own session and process group. Its children that stay in that group die with
`killpg`; children that start their own group (the reference host's providers do, and a hostile
provider may) are found through `/proc` (each process's parent and group) while the child is still
alive, because once it exits they are re-parented and no longer look like its. Linux only;
elsewhere the tree is just the child's group.

A host that dies on its own cannot be walked any more; a bridge process that owns its hosts
(`asp-mcp-bridge serve`) therefore makes itself a child subreaper, so what such a host leaves
behind is re-parented to the bridge, and `sweep_orphans` ends it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Collection
from pathlib import Path

PROC = Path("/proc")
PR_SET_CHILD_SUBREAPER = 36
_subreaper = False


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of *pid*, or None when it is gone or unreadable."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the command name may hold spaces and ')'
    return int(fields[1]), int(fields[2])


def _children() -> dict[int, list[tuple[int, int]]]:
    """parent pid -> [(pid, process group)] of every live process."""
    children: dict[int, list[tuple[int, int]]] = {}
    if not PROC.is_dir():
        return children
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        info = _stat(int(entry.name))
        if info is not None:
            children.setdefault(info[0], []).append((int(entry.name), info[1]))
    return children


def descendants(root: int) -> list[tuple[int, int]]:
    """(pid, process group) of every live descendant of *root*, parents before children."""
    children = _children()
    found: list[tuple[int, int]] = []
    queue = [root]
    while queue:
        for pid, group in children.get(queue.pop(0), []):
            found.append((pid, group))
            queue.append(pid)
    return found


def end_tree(leader: int, tree: list[tuple[int, int]]) -> None:
    """SIGKILL the leader's process group, then every process of *tree* and its group — never the
    caller's own group. Processes already gone are skipped."""
    own = os.getpgrp()
    groups = {leader} | {group for _, group in tree}
    for group in groups - {own}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    for pid, _ in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def become_subreaper() -> bool:
    """Linux: orphans of our hosts re-parent to this process (call only in a process whose every
    child is a host: `sweep_orphans` ends the children it does not know)."""
    global _subreaper
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return _subreaper


def sweep_orphans(keep: Collection[int]) -> list[int]:
    """As a subreaper: SIGKILL every child of ours that is not in *keep* (a live host), with its
    tree and group; returns their pids, for reaping. A no-op unless `become_subreaper` ran."""
    if not _subreaper:
        return []
    ended: list[int] = []
    for pid, group in _children().get(os.getpid(), []):
        if pid not in keep:
            end_tree(group, [(pid, group), *descendants(pid)])
            ended.append(pid)
    return ended
