"""The host's whole process tree, found and ended: nothing the bridge started outlives it.

The host runs in its own session and process group. Its children that stay in that group die with
`killpg`; children that start their own group (the reference host's providers do) are found
through `/proc` (each process's parent and group) while the host is still alive, because once it
exits they are re-parented and no longer look like ours. Linux only; elsewhere the tree is just
the host's group.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of *pid*, or None when it is gone or unreadable."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the command name may hold spaces and ')'
    return int(fields[1]), int(fields[2])


def descendants(root: int) -> list[tuple[int, int]]:
    """(pid, process group) of every live descendant of *root*, parents before children."""
    if not PROC.is_dir():
        return []
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        info = _stat(int(entry.name))
        if info is not None:
            children.setdefault(info[0], []).append((int(entry.name), info[1]))
    found: list[tuple[int, int]] = []
    queue = [root]
    while queue:
        for pid, group in children.get(queue.pop(0), []):
            found.append((pid, group))
            queue.append(pid)
    return found


def end_tree(leader: int, tree: list[tuple[int, int]]) -> None:
    """SIGKILL the leader's process group, then every process of *tree* and its group — never the
    bridge's own group. Processes already gone are skipped."""
    own = os.getpgrp()
    groups = {leader} | {group for _, group in tree}
    for group in groups - {own}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    for pid, _ in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
