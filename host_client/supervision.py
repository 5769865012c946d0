"""Supervision of the host process for `HostClient`: lazy start, exit bookkeeping, backoff after
failed starts, the permanent `down` state, and a polite stop.

`HostSupervisor` is a part the client owns (composition): it knows processes, not calls. The
client hands it the wire observer at construction, so each spawned endpoint reports its traffic
to the client's trace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from typing import Literal

import anyio
from anyio.abc import TaskGroup

from asp_protocol.jsonrpc import WireEvent
from host_client import process as proc
from host_client.errors import HostUnavailable
from host_client.process import ExitInfo, HostInstance
from host_client.settings import HostClientSettings

HostState = Literal["idle", "starting", "running", "exited", "down", "closed"]
STDERR_TAIL_BYTES = 2048


WireObserver = Callable[[HostInstance, WireEvent], None]


@dataclass(frozen=True)
class SupervisionRecord:
    """The supervisor's bookkeeping at one moment: instances, start counts, down reason, last exit."""

    current: HostInstance | None  # the most recently spawned instance, alive or not
    last: HostInstance | None  # the last instance spawned, kept after it exits (stderr, exit)
    starts: int
    failed_starts: int
    down_reason: str | None
    last_exit: ExitInfo | None


class HostSupervisor:
    """The host process of one `HostClient`: at most one instance alive, restarted on demand."""

    def __init__(self, settings: HostClientSettings, on_wire: WireObserver) -> None:
        self.settings = settings
        self._on_wire = on_wire
        self._stack: AsyncExitStack | None = None
        self._tg: TaskGroup | None = None
        self._instance: HostInstance | None = None
        self._last_instance: HostInstance | None = None
        self._start_lock = anyio.Lock()
        self._starting = False
        self._closed = False
        self._starts = 0
        self._failed_starts = 0
        self._last_failure_at = 0.0
        self._last_exit: ExitInfo | None = None
        self._down_reason: str | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> None:
        """Begin supervising (the task group restarts and exits are watched in)."""
        self._stack = AsyncExitStack()
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())

    async def aclose(self) -> None:
        """Stop the host politely (stdin EOF, then terminate, then kill) and end supervision."""
        self._closed = True
        instance = self._instance
        if instance is not None:
            await proc.stop(instance, self.settings.exit_grace)
            with anyio.move_on_after(self.settings.exit_grace + 1.5, shield=True):
                await instance.dead.wait()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        if self._stack is not None:
            stack, self._stack = self._stack, None
            await stack.aclose()

    async def start(self) -> None:
        """Start the host now instead of on the first call (raises HostUnavailable)."""
        await self.ensure_instance()

    def start_in_background(self) -> None:
        """Begin starting the host without waiting; a failure is recorded like any failed start."""
        if self._tg is not None:
            self._tg.start_soon(self._start_quietly)

    async def _start_quietly(self) -> None:
        with suppress(HostUnavailable):
            await self.ensure_instance()

    @property
    def pid(self) -> int | None:
        """The running host's pid, None when no host process is up."""
        instance = self._instance
        return instance.pid if instance is not None and instance.alive else None

    @property
    def state(self) -> HostState:
        if self._closed:
            return "closed"
        if self._down_reason is not None:
            return "down"
        if self._starting:
            return "starting"
        if self._instance is not None and self._instance.alive:
            return "running"
        return "exited" if self._starts else "idle"

    def record(self) -> SupervisionRecord:
        """What supervision knows right now, for the debug view (a copy; never live state)."""
        return SupervisionRecord(
            self._instance,
            self._last_instance,
            self._starts,
            self._failed_starts,
            self._down_reason,
            self._last_exit,
        )

    def mark_answered(self, instance: HostInstance) -> None:
        """The host answered a call: it started well, so the failed-start count resets."""
        instance.answered = True
        if instance is self._instance:
            self._failed_starts = 0

    def unavailable(self, instance: HostInstance) -> HostUnavailable:
        info = instance.exit
        if info is None:
            return HostUnavailable(
                "host closed its output stream",
                stderr_tail=instance.stderr.tail(STDERR_TAIL_BYTES),
            )
        return HostUnavailable(info.reason, exit_code=info.exit_code, stderr_tail=info.stderr_tail)

    # -- supervision --------------------------------------------------------------------------

    async def ensure_instance(self) -> HostInstance:
        """The running instance, started (after any backoff) when there is none."""
        instance = self._instance
        if instance is not None and instance.alive:
            return instance
        async with self._start_lock:
            instance = self._instance
            if instance is not None and instance.alive:
                return instance
            if self._closed:
                raise HostUnavailable("the host client is closed", permanent=True)
            if self._down_reason is not None:
                last = self._last_exit
                raise HostUnavailable(
                    self._down_reason,
                    exit_code=last.exit_code if last else None,
                    stderr_tail=last.stderr_tail if last else "",
                    permanent=True,
                )
            if self._failed_starts:
                delay = min(
                    self.settings.backoff_initial * 2 ** (self._failed_starts - 1),
                    self.settings.backoff_max,
                )
                wait = self._last_failure_at + delay - time.monotonic()
                if wait > 0:
                    await anyio.sleep(wait)
            return await self._spawn()

    async def _spawn(self) -> HostInstance:
        if self._tg is None:
            raise RuntimeError("HostClient must be used as an async context manager")
        self._starting = True
        try:
            instance = await proc.spawn(self.settings, self._on_wire)
        except OSError as exc:
            reason = f"cannot start host {self.settings.argv[0]!r}: {exc.strerror or exc}"
            self._register_failure(reason, None)
            raise self._raise_for_failure(reason, None) from None
        finally:
            self._starting = False
        self._starts += 1
        self._instance = self._last_instance = instance
        self._tg.start_soon(self._supervise, instance)
        return instance

    async def _supervise(self, instance: HostInstance) -> None:
        code: int | None = None
        try:
            code = await proc.supervise(instance, self.settings.exit_grace)
        finally:
            tail = instance.stderr.tail(STDERR_TAIL_BYTES)
            if self._closed:
                reason = "host stopped by the bridge"
            elif instance.answered:
                reason = "host exited"
            else:
                reason = "host exited before answering any call"
            instance.exit = ExitInfo(code, reason, time.time(), tail, instance.answered)
            self._last_exit = instance.exit
            if not self._closed and not instance.answered:
                self._register_failure(reason, code)
            instance.dead.set()

    def _register_failure(self, reason: str, exit_code: int | None) -> None:
        self._failed_starts += 1
        self._last_failure_at = time.monotonic()
        if exit_code is None and self._last_exit is None:
            self._last_exit = ExitInfo(None, reason, time.time(), "", False)
        if self._failed_starts >= self.settings.max_failed_starts:
            code = f" (exit code {exit_code})" if exit_code is not None else ""
            self._down_reason = (
                f"host is down after {self._failed_starts} consecutive failed starts; "
                f"last: {reason}{code}"
            )

    def _raise_for_failure(self, reason: str, exit_code: int | None) -> HostUnavailable:
        if self._down_reason is not None:
            return HostUnavailable(self._down_reason, exit_code=exit_code, permanent=True)
        return HostUnavailable(reason, exit_code=exit_code)

    def reset(self) -> None:
        """Leave the permanent `down` state so the next call tries again (an operator action)."""
        self._down_reason = None
        self._failed_starts = 0
