"""Starting git for one request cheaply, and never a program the repository put on the way.

`subprocess.run` costs the host about 0.7 ms of its own CPU per git call on the project's 2-core
machine — encoding the environment (~75 variables, half of them the host's config overrides) in
Python on every call, the error pipe, the close-fds walk, the `communicate` selector — which on a
1,000-file repository is an eighth of what `git status` itself takes. Here the program is
started with `os.posix_spawn` (glibc starts it with `clone(CLONE_VFORK)`: no page tables copied,
whatever the host's size) from an environment encoded once (`EncodedEnv`), its output is read
with one `poll` loop, and the call costs about 0.25 ms.

The child gets standard input `/dev/null` (or the bytes given) — `subprocess.run` without input
handed it the host's own request pipe —, SIGPIPE and SIGXFSZ back at their defaults, no blocked
signal, and descriptors 0 to 2 only: every other descriptor the host opens is close-on-exec,
and every one open is closed in the child anyway (`_close_inherited`, as `close_fds` did).
The working directory is git's `-C`, which git applies before it reads anything. `finish_async`
waits for the answer on the asyncio event loop instead of in a thread (`_LoopReading`).

`find_program` resolves the program once, from the absolute entries of `PATH` only: a relative
entry (`.`, an empty entry) would have been looked up from the repository's directory, where a
planted `git` executable would have run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio

_RESET_SIGNALS = tuple(s for s in (signal.SIGPIPE, getattr(signal, "SIGXFSZ", None)) if s)
_READ = 1 << 16


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
    """A started program whose output is collected by `finish` (once); `close` kills and reaps
    it if `finish` never ran, so no exception between the two leaves a process behind."""

    def __init__(self, pid: int, out_r: int, err_r: int, in_w: int, stdin: bytes | None) -> None:
        self.pid = pid
        self._fds = [out_r, err_r] + ([in_w] if stdin is not None else [])
        self._stdin = stdin
        self._done: Finished | None = None

    def finish(self) -> Finished:
        if self._done is None:
            out_r, err_r = self._fds[0], self._fds[1]
            in_w = self._fds[2] if self._stdin is not None else -1
            try:
                out, err = _collect(out_r, err_r, in_w, self._stdin, self._fds)
            except BaseException:
                self.close()
                raise
            self._close_fds()
            _, status = os.waitpid(self.pid, 0)
            self._done = Finished(os.waitstatus_to_exitcode(status), out, err)
        return self._done

    async def finish_async(self) -> Finished:
        """`finish` without blocking the event loop (no input only): both pipes and a pidfd are
        watched by the asyncio loop itself — plain reader callbacks, no task per pipe — and the
        child is reaped once its pidfd says it exited. Off asyncio, `finish` in a thread."""
        if self._done is None:
            assert self._stdin is None, "input is fed by the blocking finish()"
            try:
                reading = _LoopReading(
                    asyncio.get_running_loop(), self.pid, self._fds[0], self._fds[1]
                )
            except (RuntimeError, OSError):  # not on asyncio, or no pidfd (Linux < 5.3)
                return await anyio.to_thread.run_sync(self.finish)
            try:
                out, err = await reading.done
            except BaseException:
                self.close()
                raise
            self._close_fds()
            _, status = os.waitpid(self.pid, 0)  # its pidfd was readable: it has exited
            self._done = Finished(os.waitstatus_to_exitcode(status), out, err)
        return self._done

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
    """Start *program* with its stdout and stderr piped to the host; raises OSError when it
    cannot be started."""
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    in_r, in_w = os.pipe2(os.O_CLOEXEC) if stdin is not None else (-1, -1)
    mine = [out_r, err_r] + ([in_w] if stdin is not None else [])
    theirs = [out_w, err_w] + ([in_r] if stdin is not None else [])
    actions: list[tuple[object, ...]] = [
        (os.POSIX_SPAWN_DUP2, in_r, 0)
        if stdin is not None
        else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2),
        *_close_inherited(),
    ]
    try:
        if min(theirs) <= 2:  # the host runs without stdio: a dup2 onto itself keeps close-on-exec
            raise OSError("standard descriptors are closed; cannot start a child safely")
        pid = os.posix_spawn(
            program, argv, env, file_actions=actions, setsigmask=(), setsigdef=_RESET_SIGNALS
        )
    except BaseException:
        for fd in mine:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return Child(pid, out_r, err_r, in_w, stdin)


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


def _collect(
    out_r: int, err_r: int, in_w: int, stdin: bytes | None, still_open: list[int]
) -> tuple[bytes, bytes]:
    """Read both pipes to their end (and feed stdin) in one poll loop: no pipe can fill and
    stall the child while the host waits on the other. Stdin is closed (and dropped from
    *still_open*) once written, so the child sees its end."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poller = select.poll()
    poller.register(out_r, select.POLLIN)
    poller.register(err_r, select.POLLIN)
    pending = memoryview(stdin or b"")
    if stdin is not None:
        if pending:
            os.set_blocking(in_w, False)
            poller.register(in_w, select.POLLOUT)
        else:
            _close_input(in_w, still_open)
    open_reads = 2
    while open_reads or pending:
        for fd, _event in poller.poll():
            if fd == in_w:
                try:
                    pending = pending[os.write(in_w, pending[:_READ]) :]
                except BrokenPipeError:
                    pending = pending[:0]  # the child stopped reading: its answer says why
                except BlockingIOError:
                    continue
                if not pending:
                    poller.unregister(in_w)
                    _close_input(in_w, still_open)
                continue
            data = os.read(fd, _READ)
            if data:
                chunks[fd].append(data)
            else:
                poller.unregister(fd)
                open_reads -= 1
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


class _LoopReading:
    """Reads a child's stdout and stderr to their end and waits for its exit on the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, pid: int, out_r: int, err_r: int) -> None:
        self.loop = loop
        self.done: asyncio.Future[tuple[bytes, bytes]] = loop.create_future()
        self.chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
        self.out_r, self.err_r = out_r, err_r
        self.pidfd = os.pidfd_open(pid)  # first: when it fails, nothing is watched yet
        self.watched = [out_r, err_r, self.pidfd]
        for fd in (out_r, err_r):
            os.set_blocking(fd, False)
            loop.add_reader(fd, self._readable, fd)
        loop.add_reader(self.pidfd, self._exited)
        self.done.add_done_callback(self._stop)

    def _readable(self, fd: int) -> None:
        try:
            data = os.read(fd, _READ)
        except BlockingIOError:
            return
        except OSError as exc:
            if not self.done.done():
                self.done.set_exception(exc)
            return
        if data:
            self.chunks[fd].append(data)
            return
        self._unwatch(fd)
        self._maybe_done()

    def _exited(self) -> None:
        self._unwatch(self.pidfd)
        self._maybe_done()

    def _maybe_done(self) -> None:
        if len(self.watched) == 0 and not self.done.done():
            out, err = self.chunks[self.out_r], self.chunks[self.err_r]
            self.done.set_result((b"".join(out), b"".join(err)))

    def _unwatch(self, fd: int) -> None:
        if fd in self.watched:
            self.loop.remove_reader(fd)
            self.watched.remove(fd)

    def _stop(self, _future: object) -> None:
        """Done or cancelled: stop watching, and close the pidfd (the pipes are the child's)."""
        for fd in list(self.watched):
            self._unwatch(fd)
        os.close(self.pidfd)


def _close_input(fd: int, still_open: list[int]) -> None:
    still_open.remove(fd)
    os.close(fd)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
