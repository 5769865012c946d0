"""Resolving a large tree's uses on two cores: a forked copy of the index links the second half.

Linking (linking.py) is the one step of a first build that needs every file's facts at once, so it
cannot run in the parse workers; done in turn it kept one core idle for about three seconds on
Django. A fork shares the whole index with a child without copying or sending it: the child links
the files of the second part (a little under half the uses) while this process links the first,
then sends its tables back in the index cache's compact encoding (indexcache.py), and they are
appended in file order — exactly what linking every file in turn records (references in the same
order, counts summed, the first unresolved examples kept). The child only computes and writes one
pipe; anything wrong with it (it died, its answer does not decode, or it is still not done well
after this process finished its own part — a fork of a threaded process can hang on a lock another
thread held) and it is killed and this process links its part.
"""

from __future__ import annotations

import logging
import marshal
import os
import select
import signal
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from reference_host.providers.pyindex.indexcache import decode, encode
from reference_host.providers.pyindex.linking import Ref, link_file, link_imports

if TYPE_CHECKING:
    from reference_host.providers.pyindex.index import FileEntry, PythonIndex

log = logging.getLogger("asp.python-inspect.build")

SPLIT_MIN_USES = 50_000  # below this a fork costs more than the half it saves
# this process's share of the uses: the child also copies the pages it touches (copy-on-write)
# and encodes its tables before this process can take them, so it gets a little less
OWN_SHARE = 0.55
_PART = "linked-part"  # the key sealed into the child's entry
# how long the child may still take once this process has linked its own part: its part is the
# smaller one, so a healthy child is done about when this process is
CHILD_GRACE_S = 10.0
CHILD_GRACE_FACTOR = 2.0


def link_files(
    index: PythonIndex,
    entries: list[FileEntry],
    cores: int = 1,
    graph: Callable[[PythonIndex], None] | None = None,
) -> None:
    """Link *entries* (in order) into `index.links`, in two processes when *cores* > 1, the tree
    is large enough and the platform forks. Every file's imports are resolved first, here: the
    import graph is then whole, and *graph* is told so (an `impact` that reads nothing else can
    be answered while the uses are linked); their references are recorded after each file's
    uses, as linking every file in turn records them."""
    imports = {entry.path: link_imports(index, entry) for entry in entries}
    if graph is not None:
        graph(index)
    uses = [len(entry.facts.uses) for entry in entries]
    if cores < 2 or sum(uses) < SPLIT_MIN_USES or not hasattr(os, "fork"):
        _link(index, entries, imports)
        return
    half, seen = int(sum(uses) * OWN_SHARE), 0
    cut = len(entries)
    for position, count in enumerate(uses):
        seen += count
        if seen >= half:
            cut = position + 1
            break
    first, second = entries[:cut], entries[cut:]
    assert not index.links.refs, "the child's tables must start empty"
    reader, writer = os.pipe()
    try:
        child = os.fork()
    except OSError as exc:
        os.close(reader)
        os.close(writer)
        log.info("cannot fork a linking helper (%s): linking in turn", exc)
        _link(index, entries, imports)
        return
    if child == 0:  # pragma: no cover - runs in the forked child, which never returns
        _child(index, second, imports, reader, writer)
    os.close(writer)
    started = time.monotonic()
    _link(index, first, imports)
    grace = max(CHILD_GRACE_S, CHILD_GRACE_FACTOR * (time.monotonic() - started))
    data = child_output(child, reader, grace)
    part = decode(_PART, data) if data is not None else None
    if part is None:
        log.info("linking helper failed: linking its half in turn")
        _link(index, second, imports)
    else:
        index.links.absorb(part)


def child_output(child: int, reader: int, grace_s: float) -> bytes | None:
    """Everything the child wrote, once it exited cleanly; None when it failed, or when it had
    not finished within *grace_s* (it is then killed). The child is always reaped."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + grace_s
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([reader], [], [], left)[0]:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                return None
            chunk = os.read(reader, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(reader)
    _, status = os.waitpid(child, 0)
    return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None


def in_child(run: Callable[[], Any], grace_s: float) -> Any | None:
    """`run()` in a forked copy of this process, its value sent back marshalled; None when the
    fork failed, the child raised or sent nothing marshal can send, or it took longer than
    *grace_s* (it is then killed, `child_output`). What the child allocates and frees never
    touches this process's heap: the reason early answers and cache writes run in one."""
    reader, writer = os.pipe()
    try:
        child = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return None
    if child == 0:  # pragma: no cover - runs in the forked child, which never returns
        code = 70
        try:
            os.close(reader)
            log.disabled = True  # a lock another thread held at the fork must not be needed
            _detach_wire()
            with os.fdopen(writer, "wb") as pipe:
                pipe.write(marshal.dumps(run()))
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    sent = child_output(child, reader, grace_s)
    try:
        return marshal.loads(sent) if sent is not None else None
    except (EOFError, ValueError, TypeError):
        return None


def _detach_wire() -> None:
    """In a child: stdin and stdout (this provider's pipes to the host) on /dev/null, so a child
    still writing a cache never keeps the host from seeing the provider's end of file."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def _link(index: PythonIndex, entries: Iterable[FileEntry], imports: dict[str, list[Ref]]) -> None:
    for entry in entries:
        link_file(index, entry, imports=imports.pop(entry.path))


def _child(
    index: PythonIndex,
    entries: list[FileEntry],
    imports: dict[str, list[Ref]],
    reader: int,
    writer: int,
) -> None:
    """The forked child: link *entries* into its copy of the tables (no reference yet; the
    import graph, which the parent has, is left out of what it sends), write them, exit without
    cleanup (the parent's threads, event loop and pipes to the host are not this process's to
    touch)."""
    code = 70
    try:
        os.close(reader)
        _detach_wire()
        links = index.links
        for table in (links.deps, links.rdeps, links.module_rdeps, links.type_rdeps):
            table.clear()
        _link(index, entries, imports)
        data = encode(_PART, index.links)
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)
