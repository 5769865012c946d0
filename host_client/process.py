"""One running host process: its pipes, its JSON-RPC endpoint, its stderr ring and how it ended."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from asp_protocol.jsonrpc import JsonRpcEndpoint, WireEvent
from asp_protocol.pipes import LoopReceiveStream, LoopSendStream
from asp_protocol.proctree import descendants, end_tree, sweep_orphans
from host_client.ring import ByteRing
from host_client.settings import HostClientSettings

_LIVE: set[int] = set()  # pids of the hosts this process runs (never swept as orphans)


@dataclass(frozen=True)
class ExitInfo:
    """How a host process ended, kept for error reports and `asp_debug_host`."""

    exit_code: int | None
    reason: str
    at: float
    stderr_tail: str
    answered: bool


@dataclass
class HostInstance:
    """A spawned host. `dead` is set once the process is gone and its exit is recorded."""

    process: Process
    stdin: ByteSendStream
    stdout: ByteReceiveStream
    endpoint: JsonRpcEndpoint
    stderr: ByteRing
    started_at: float
    dead: anyio.Event = field(default_factory=anyio.Event)
    stderr_done: anyio.Event = field(default_factory=anyio.Event)
    exit: ExitInfo | None = None
    answered: bool = False
    invalid_lines: int = 0
    by_id: dict[Any, Any] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return not self.dead.is_set() and not self.endpoint.closed


async def spawn(
    settings: HostClientSettings, on_wire: Callable[[HostInstance, WireEvent], None]
) -> HostInstance:
    """Start the configured argv with explicit pipes in the workspace; raises OSError if it cannot."""
    child_stdin, write_end = os.pipe()  # both close-on-exec; the child gets its end as fd 0
    read_end, child_stdout = os.pipe()  # and this one as fd 1
    try:
        process = await anyio.open_process(
            list(settings.argv),
            stdin=child_stdin,
            stdout=child_stdout,
            stderr=PIPE,
            cwd=str(settings.cwd),
            env=settings.env,
            start_new_session=True,  # its own group: ended as a whole (asp_protocol/proctree.py)
        )
    except BaseException:
        os.close(write_end)
        os.close(read_end)
        raise
    finally:
        os.close(child_stdin)
        os.close(child_stdout)
    # written and read on the loop: anyio's process stdin stream yields to the loop after every
    # write, and a reply read from its stdout stream reaches the caller a loop turn later
    stdin = LoopSendStream(write_end, owned=True)
    stdout = LoopReceiveStream(read_end, owned=True)
    _LIVE.add(process.pid)
    holder: list[HostInstance] = []
    endpoint = JsonRpcEndpoint(
        stdout,
        stdin,
        name=f"host[{process.pid}]",
        max_line_bytes=settings.max_line_bytes,
        on_wire=lambda event: on_wire(holder[0], event) if holder else None,
    )
    instance = HostInstance(
        process, stdin, stdout, endpoint, ByteRing(settings.stderr_buffer_bytes), time.time()
    )
    holder.append(instance)
    return instance


async def drain_stderr(instance: HostInstance) -> None:
    """Read stderr continuously so a chatty host can never block on a full pipe."""
    stream = instance.process.stderr
    try:
        if stream is None:
            return
        while True:
            try:
                chunk = await stream.receive(65536)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            instance.stderr.write(chunk)
    finally:
        instance.stderr_done.set()


async def supervise(instance: HostInstance, grace: float) -> int | None:
    """Serve the endpoint until the process is gone; return its exit code (None if unknown)."""
    process = instance.process

    async def serve_then_reap() -> None:
        await instance.endpoint.serve()
        # stdout closed: a live process without a protocol stream is useless, so end it.
        with anyio.move_on_after(grace):
            await process.wait()
        if process.returncode is None:
            _kill(process)

    async with anyio.create_task_group() as tg:
        tg.start_soon(drain_stderr, instance)
        tg.start_soon(serve_then_reap)
        code = await process.wait()
        _LIVE.discard(process.pid)
        end_tree(process.pid, [])  # whatever it left behind in its own group
        await _reap(sweep_orphans(keep=_LIVE))  # and, as a subreaper, what escaped the group
        # The process is gone; let stdout and stderr deliver what is still buffered in the pipes.
        with anyio.move_on_after(0.5):
            await instance.endpoint.closed_event.wait()
        with anyio.move_on_after(0.5):
            await instance.stderr_done.wait()
        tg.cancel_scope.cancel()
    await instance.stdout.aclose()  # ours to close: a pipe a leftover process still holds open
    return code


async def stop(instance: HostInstance, grace: float) -> None:
    """Close the host's stdin (a polite host exits at EOF), then terminate, then kill; then end
    every process it started, directly or not (found while it is alive, see asp_protocol/proctree.py)."""
    process = instance.process
    if process.returncode is not None:
        end_tree(process.pid, [])
        return
    tree = descendants(process.pid)
    try:
        await _stop_leader(process, instance.stdin, grace)
    finally:
        end_tree(process.pid, tree + descendants(process.pid))


async def _stop_leader(process: Process, stdin: ByteSendStream, grace: float) -> None:
    with anyio.CancelScope(shield=True):
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await stdin.aclose()
        with anyio.move_on_after(grace):
            await process.wait()
        if process.returncode is None:
            try:
                process.terminate()
            except ProcessLookupError:
                return
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            _kill(process)
            with anyio.move_on_after(grace):
                await process.wait()


async def _reap(pids: list[int]) -> None:
    """Collect the exit of killed orphans (our children only because we are their subreaper)."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            await anyio.to_thread.run_sync(os.waitpid, pid, 0)


def _kill(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()
