"""Starting git for one request cheaply, and never a program the repository put on the way.

`subprocess.run` costs the host about 0.7 ms of its own CPU per git call on the project's 2-core
machine — encoding the environment (~75 variables, half of them the host's config overrides) in
Python on every call, the error pipe, the close-fds walk, the `communicate` selector — which on a
1,000-file repository is an eighth of what `git status` itself takes. Here the program is
started with `os.posix_spawn` (glibc starts it with `clone(CLONE_VFORK)`: no page tables copied,
whatever the host's size) from an environment encoded once (`EncodedEnv`), and the call costs
about 0.25 ms. Its standard output and error are anonymous in-memory files (`memfd_create`), not
pipes: the child never waits on the host to empty a pipe, so the host only waits for its exit
and then reads both files whole — one wake-up when git is done, where pipes cost a wake-up and a
loop turn for each chunk and each end of file, and two descriptors watched and unwatched on the
loop per git start.

The child gets standard input `/dev/null` (or a file holding the bytes given) — `subprocess.run`
without input handed it the host's own request pipe —, SIGPIPE and SIGXFSZ back at their defaults, no blocked
signal, and descriptors 0 to 2 only: every other descriptor the host opens is close-on-exec,
and every one open is closed in the child anyway (`_close_inherited`, as `close_fds` did).
The working directory is git's `-C`, which git applies before it reads anything. `finish_async`
waits for the exit on the asyncio event loop instead of in a thread (`_Exited`).

`find_program` resolves the program once, from the absolute entries of `PATH` only: a relative
entry (`.`, an empty entry) would have been looked up from the repository's directory, where a
planted `git` executable would have run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio

_RESET_SIGNALS = tuple(s for s in (signal.SIGPIPE, getattr(signal, "SIGXFSZ", None)) if s)


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes


def find_program(name: str, env: Mapping[str, str]) -> str | None:
    """The first executable regular file *name* in the absolute directories of env's PATH."""
    for directory in env.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(directory):
            continue  # would be looked up from the child's working directory: the repository
        candidate = os.path.join(directory, name)
        try:
            info = os.stat(candidate)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(info.st_mode) and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class EncodedEnv:
    """An environment as bytes, rebuilt only when its source mapping's items change."""

    _source: tuple[tuple[str, str], ...] = ()
    _encoded: dict[bytes, bytes] = field(default_factory=dict)

    def get(self, env: Mapping[str, str]) -> dict[bytes, bytes]:
        items = tuple(env.items())
        if items != self._source:
            self._encoded = {os.fsencode(k): os.fsencode(v) for k, v in items}
            self._source = items
        return self._encoded

    @property
    def encoded(self) -> dict[bytes, bytes]:
        """The last environment `get` encoded."""
        return self._encoded


class Child:
    """A started program whose outputs are collected by `finish` (once) when it has exited;
    `close` kills and reaps it if `finish` never ran, so no exception between the two leaves a
    process behind."""

    def __init__(self, pid: int, out: int, err: int, given: int | None) -> None:
        self.pid = pid
        self._fds = [out, err] + ([given] if given is not None else [])
        self._done: Finished | None = None

    def finish(self) -> Finished:
        if self._done is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except BaseException:
                self.close()
                raise
            self._collect(status)
        assert self._done is not None
        return self._done

    async def finish_async(self) -> Finished:
        """`finish` without blocking the event loop: the asyncio loop itself watches a pidfd of
        the child (a plain reader callback, no task) and the child is reaped once it says the
        child exited. Off asyncio, or without pidfds, `finish` in a thread."""
        if self._done is None:
            try:
                exited = _Exited(asyncio.get_running_loop(), self.pid)
            except (RuntimeError, OSError):  # not on asyncio, or no pidfd (Linux < 5.3)
                return await anyio.to_thread.run_sync(self.finish)
            try:
                await exited.done
            except BaseException:
                self.close()
                raise
            _, status = os.waitpid(self.pid, 0)  # its pidfd was readable: it has exited
            self._collect(status)
        assert self._done is not None
        return self._done

    def _collect(self, status: int) -> None:
        self.pid = 0  # reaped: never killed again (the number may be another process's now)
        try:
            out, err = _contents(self._fds[0]), _contents(self._fds[1])
        finally:
            self._close_fds()
        self._done = Finished(os.waitstatus_to_exitcode(status), out, err)

    def close(self) -> None:
        if self._done is None and self.pid:
            _kill(self.pid)
            self.pid = 0
        self._close_fds()

    def _close_fds(self) -> None:
        while self._fds:
            os.close(self._fds.pop())


def spawn_start(
    program: str, argv: list[str], env: Mapping[bytes, bytes], stdin: bytes | None = None
) -> Child:
    """Start *program* with its stdout and stderr going to files of the host's (see the module
    docstring); raises OSError when it cannot be started."""
    fds: list[int] = []
    try:
        out = _file(fds)
        err = _file(fds)
        given = _given(fds, stdin) if stdin is not None else None
        actions: list[tuple[object, ...]] = [
            (os.POSIX_SPAWN_DUP2, given, 0)
            if given is not None
            else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out, 1),
            (os.POSIX_SPAWN_DUP2, err, 2),
            *_close_inherited(),
        ]
        if min(fds) <= 2:  # the host runs without stdio: a dup2 onto itself keeps close-on-exec
            raise OSError("standard descriptors are closed; cannot start a child safely")
        pid = os.posix_spawn(
            program, argv, env, file_actions=actions, setsigmask=(), setsigdef=_RESET_SIGNALS
        )
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return Child(pid, out, err, given)


def _file(opened: list[int]) -> int:
    """A new anonymous file in memory (close-on-exec), added to *opened*."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("asp-host-git", os.MFD_CLOEXEC)
    else:  # not Linux: an unlinked temporary file (Python opens it close-on-exec)
        fd, path = tempfile.mkstemp(prefix="asp-host-git-")
        os.unlink(path)
    opened.append(fd)
    return fd


def _given(opened: list[int], data: bytes) -> int:
    """A file holding *data*, read from its start: the child's input."""
    fd = _file(opened)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _contents(fd: int) -> bytes:
    """Everything written to one of the child's output files."""
    size = os.fstat(fd).st_size
    parts = [os.pread(fd, size, 0)] if size else []
    done = sum(map(len, parts))
    while done < size and parts[-1]:  # a short read (a single read stops short of 2 GiB)
        parts.append(os.pread(fd, size - done, done))
        done += len(parts[-1])
    return b"".join(parts)


def _close_inherited() -> list[tuple[object, ...]]:
    """Close actions for every descriptor above 2 open in the host: the child must not hold the
    host's pipes or files. Python opens everything close-on-exec, so only one some library made
    inheritable matters; closing all of them costs the child one `close` each (a descriptor gone
    by then, such as the listing's own, fails harmlessly there), where asking each one's flag
    cost the host one system call each before every start (~50 us per status, cold)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return []  # no /proc: rely on close-on-exec alone, as Python opens everything
    return [(os.POSIX_SPAWN_CLOSE, fd) for fd in map(int, names) if fd > 2]


def spawn_run(
    program: str, argv: list[str], env: Mapping[bytes, bytes], stdin: bytes | None = None
) -> Finished:
    """Run *program* to completion, its stdout and stderr captured; raises OSError when it
    cannot be started."""
    child = spawn_start(program, argv, env, stdin)
    try:
        return child.finish()
    finally:
        child.close()


class _Exited:
    """A child's exit, watched on the loop through a pidfd (`done` is set once it exited)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, pid: int) -> None:
        self.loop = loop
        self.done: asyncio.Future[None] = loop.create_future()
        self.pidfd = os.pidfd_open(pid)  # first: when it fails, nothing is watched yet
        loop.add_reader(self.pidfd, self._exited)
        self.done.add_done_callback(self._stop)

    def _exited(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def _stop(self, _future: object) -> None:
        """Done or cancelled: stop watching and close the pidfd."""
        self.loop.remove_reader(self.pidfd)
        os.close(self.pidfd)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
