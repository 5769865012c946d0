"""Running a recursive analysis once more, deeper, when real code nests past the default limit.

pyflakes visits the tree recursively, a few Python frames per level: sympy's
`polys/numberfields/resolvent_lookup.py` (a 40 KB table of long sums, each a left-deep chain of
additions) needs a recursion limit of about 2,000 where the default is 1,000. The second try runs
in its own thread with a large stack, so the deeper Python recursion (generators are resumed
through C frames) cannot overflow the C stack; past `DEEP_LIMIT` it is still a RecursionError.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
DEEP_LIMIT = 8_000
DEEP_STACK_BYTES = 256 * 1024 * 1024  # reserved address space; pages are touched only if used
_deep_lock = threading.Lock()


def deeper(fn: Callable[[], T]) -> T:
    """*fn*'s value, computed in a fresh thread with a large stack and a recursion limit of
    `DEEP_LIMIT`; its exception (RecursionError included) is raised here."""
    out: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    with _deep_lock:
        before_stack = threading.stack_size(DEEP_STACK_BYTES)
        before_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(before_limit, DEEP_LIMIT))
        try:
            worker = threading.Thread(target=run, name="deep-analysis", daemon=True)
            worker.start()
        finally:
            threading.stack_size(before_stack)
        worker.join()
        sys.setrecursionlimit(before_limit)
    if failure:
        raise failure[0]
    return out[0]
