"""`HostClient`: one supervised host process, typed `host/*` calls, deadlines, restarts and a trace.

Use it as an async context manager; the host starts lazily on the first call. When the host
exits every in-flight call fails at once with `HostUnavailable` (exit code, stderr tail); the next
call restarts it after an exponential backoff; after `max_failed_starts` consecutive failed
starts (spawn error, or exit before any answer) it stays down with the reason.
"""

from __future__ import annotations

import contextvars
import time
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import anyio
from anyio.abc import TaskGroup
from pydantic import BaseModel, ValidationError

from asp_protocol.errors import AspError, ConnectionClosed, ProtocolViolation, RequestTimeout
from asp_protocol.jsonrpc import CANCEL_METHOD, ProgressCallback, WireEvent
from asp_protocol.models import (
    AuthorityStatusResult,
    CapabilitiesResult,
    DecisionEnvelope,
    QueryInspectResult,
    StatusResult,
)
from host_client import process as proc
from host_client.errors import HostProtocolError, HostUnavailable
from host_client.methods import (
    RESULT_MODELS,
    ApplyProposalResult,
    PolicyResult,
    PutBlobResult,
    RequestEditPlanResult,
    WorkingChangesetResult,
)
from host_client.observe import LatencyStats, Trace, TraceEntry
from host_client.process import ExitInfo, HostInstance
from host_client.settings import HostClientSettings

HostState = Literal["idle", "starting", "running", "exited", "down", "closed"]
ModelT = TypeVar("ModelT", bound=BaseModel)
_current_entry: contextvars.ContextVar[TraceEntry | None] = contextvars.ContextVar(
    "host_client_trace_entry", default=None
)
_MAX_TRACKED_IDS = 1024
STDERR_TAIL_BYTES = 2048


@dataclass(frozen=True)
class Validated(Generic[ModelT]):
    """A host result: the verbatim dict the host sent plus the model it was checked against."""

    raw: dict[str, Any]
    model: ModelT


class HostClient:
    """The outer-seam client for one host command; safe for many concurrent callers."""

    def __init__(self, settings: HostClientSettings) -> None:
        self.settings = settings
        self.stats = LatencyStats(settings.latency_window)
        self.trace = Trace(settings.trace_size)
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
        self._invalid_lines = 0
        self._in_flight = 0
        self.identity: dict[str, Any] = {}

    # -- lifecycle ----------------------------------------------------------------------------

    async def __aenter__(self) -> HostClient:
        self._stack = AsyncExitStack()
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

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
        await self._ensure_instance()

    def start_in_background(self) -> None:
        """Begin starting the host without waiting; a failure is recorded like any failed start."""
        if self._tg is not None:
            self._tg.start_soon(self._start_quietly)

    async def _start_quietly(self) -> None:
        with suppress(HostUnavailable):
            await self._ensure_instance()

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

    # -- calls --------------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        call_site: str | None = None,
        origin: str | None = None,
        validate: bool = True,
    ) -> dict[str, Any]:
        """Send one outer-seam request and return the host's result object verbatim.

        Raises `AspError` (the host answered with an error), `RequestTimeout`, `HostUnavailable`
        or `HostProtocolError` (the reply is not an object, or fails the method's result model).
        """
        entry = TraceEntry(
            method=method, call_site=call_site, origin=origin, started_at=time.time()
        )
        self.trace.add(entry)
        token = _current_entry.set(entry)
        started = time.perf_counter()
        self._in_flight += 1
        try:
            result = await self._call(entry, method, params, timeout, on_progress)
            if validate:
                _check(method, result)
            entry.outcome = "ok"
            return result
        except AspError as error:
            entry.outcome, entry.error_code, entry.fail_class = (
                "host-error",
                error.code,
                error.fail_class,
            )
            raise
        except RequestTimeout:
            entry.outcome = "timeout"
            raise
        except HostUnavailable:
            entry.outcome = "host-unavailable"
            raise
        except HostProtocolError:
            entry.outcome = "host-protocol-error"
            raise
        except anyio.get_cancelled_exc_class():
            entry.outcome = "cancelled"
            raise
        finally:
            self._in_flight -= 1
            _current_entry.reset(token)
            entry.duration_ms = (time.perf_counter() - started) * 1000
            if entry.outcome != "cancelled":
                self.stats.record(method, entry.duration_ms, ok=entry.outcome == "ok")

    async def _call(
        self,
        entry: TraceEntry,
        method: str,
        params: Any,
        timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> dict[str, Any]:
        instance = await self._ensure_instance()
        entry.host_pid = instance.pid

        async def progress(value: Any) -> None:
            entry.progress_events += 1
            if on_progress is not None:
                await on_progress(value)

        try:
            result = await instance.endpoint.request(
                method,
                params,
                timeout=self.settings.timeout if timeout is None else timeout,
                on_progress=progress,
            )
        except ConnectionClosed:
            with anyio.move_on_after(self.settings.exit_grace + 1.5):
                await instance.dead.wait()
            raise self._unavailable(instance) from None
        except ProtocolViolation as exc:
            self._mark_answered(instance)
            raise HostProtocolError(method, str(exc)) from None
        except AspError:
            self._mark_answered(instance)
            raise
        self._mark_answered(instance)
        if not isinstance(result, dict):
            raise HostProtocolError(method, f"result is {type(result).__name__}, not an object")
        _remember_identity(self.identity, result)
        return result

    def _mark_answered(self, instance: HostInstance) -> None:
        instance.answered = True
        if instance is self._instance:
            self._failed_starts = 0

    def _unavailable(self, instance: HostInstance) -> HostUnavailable:
        info = instance.exit
        if info is None:
            return HostUnavailable(
                "host closed its output stream",
                stderr_tail=instance.stderr.tail(STDERR_TAIL_BYTES),
            )
        return HostUnavailable(info.reason, exit_code=info.exit_code, stderr_tail=info.stderr_tail)

    # -- typed methods ------------------------------------------------------------------------

    async def _typed(
        self, method: str, model: type[ModelT], params: Any = None, **kw: Any
    ) -> Validated[ModelT]:
        raw = await self.call(method, params, validate=False, **kw)
        return Validated(raw, _validate(method, model, raw))

    async def status(self, **kw: Any) -> Validated[StatusResult]:
        return await self._typed("host/status", StatusResult, **kw)

    async def capabilities(self, **kw: Any) -> Validated[CapabilitiesResult]:
        return await self._typed("host/capabilities", CapabilitiesResult, **kw)

    async def authority_status(self, **kw: Any) -> Validated[AuthorityStatusResult]:
        return await self._typed("host/authority/status", AuthorityStatusResult, **kw)

    async def evaluate_changeset(
        self, params: dict[str, Any], **kw: Any
    ) -> Validated[DecisionEnvelope]:
        return await self._typed("host/evaluateChangeset", DecisionEnvelope, params, **kw)

    async def query_inspect(
        self, params: dict[str, Any], **kw: Any
    ) -> Validated[QueryInspectResult]:
        return await self._typed("host/queryInspect", QueryInspectResult, params, **kw)

    async def request_edit_plan(
        self, params: dict[str, Any], **kw: Any
    ) -> Validated[RequestEditPlanResult]:
        return await self._typed("host/requestEditPlan", RequestEditPlanResult, params, **kw)

    async def apply_proposal(
        self, params: dict[str, Any], **kw: Any
    ) -> Validated[ApplyProposalResult]:
        return await self._typed("host/applyProposal", ApplyProposalResult, params, **kw)

    async def working_changeset(
        self, params: dict[str, Any] | None = None, **kw: Any
    ) -> Validated[WorkingChangesetResult]:
        return await self._typed("host/workingChangeset", WorkingChangesetResult, params, **kw)

    async def put_blob(self, params: dict[str, Any], **kw: Any) -> Validated[PutBlobResult]:
        return await self._typed("host/putBlob", PutBlobResult, params, **kw)

    async def policy(self, **kw: Any) -> Validated[PolicyResult]:
        return await self._typed("host/policy", PolicyResult, **kw)

    # -- supervision --------------------------------------------------------------------------

    async def _ensure_instance(self) -> HostInstance:
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

    def _on_wire(self, instance: HostInstance, event: WireEvent) -> None:
        if event.direction == "out":
            entry = _current_entry.get()
            if entry is None:
                return
            if event.kind == "request":
                entry.request_id, entry.request_bytes = event.id, event.size
                instance.by_id[event.id] = entry
                while len(instance.by_id) > _MAX_TRACKED_IDS:
                    del instance.by_id[next(iter(instance.by_id))]
            elif event.kind == "notification" and event.method == CANCEL_METHOD:
                entry.cancel_sent = True
            return
        if event.kind == "invalid":
            instance.invalid_lines += 1
            self._invalid_lines += 1
        elif event.kind in ("response", "error"):
            entry = instance.by_id.pop(event.id, None)
            if entry is None:
                return
            if entry.outcome == "pending":
                entry.response_bytes = event.size
            else:
                entry.late_reply = event.kind
                entry.late_reply_code = event.error_code

    # -- introspection ------------------------------------------------------------------------

    def debug_info(self) -> dict[str, Any]:
        """Everything `asp_debug_host` shows; the stderr tail is raw host text (untrusted)."""
        instance = self._instance
        last = self._last_instance
        running = instance is not None and instance.alive
        exit_info = self._last_exit
        return {
            "command": list(self.settings.argv),
            "cwd": str(self.settings.cwd),
            "state": self.state,
            "pid": instance.pid if running and instance else None,
            "startedAt": _iso(instance.started_at) if running and instance else None,
            "uptimeSeconds": round(time.time() - instance.started_at, 3)
            if running and instance
            else None,
            "starts": self._starts,
            "restarts": max(0, self._starts - 1),
            "failedStartsInRow": self._failed_starts,
            "maxFailedStarts": self.settings.max_failed_starts,
            "downReason": self._down_reason,
            "lastExit": None
            if exit_info is None
            else {
                "exitCode": exit_info.exit_code,
                "reason": exit_info.reason,
                "at": _iso(exit_info.at),
                "answeredBeforeExit": exit_info.answered,
            },
            "inFlight": self._in_flight,
            "timeoutSeconds": self.settings.timeout,
            "invalidLinesFromHost": self._invalid_lines,
            "stderrBytesTotal": last.stderr.total if last else 0,
            "stderrBytesDropped": last.stderr.dropped if last else 0,
            "stderrTail": last.stderr.tail(STDERR_TAIL_BYTES) if last else "",
            "hostIdentity": dict(self.identity),
            "latency": self.stats.snapshot(),
        }


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def _validate(method: str, model: type[ModelT], raw: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise HostProtocolError(method, problems) from None


def _check(method: str, raw: dict[str, Any]) -> None:
    model = RESULT_MODELS.get(method)
    if model is not None:
        _validate(method, model, raw)


def _remember_identity(identity: dict[str, Any], result: dict[str, Any]) -> None:
    """Keep the host's self-reported name/version (from a receipt or status) for labels."""
    receipt = result.get("receipt")
    for candidate in (
        result.get("host"),
        receipt.get("host") if isinstance(receipt, dict) else None,
    ):
        if isinstance(candidate, dict):
            for key in ("name", "version", "outerProtocol", "bindingCandidate"):
                value = candidate.get(key)
                if isinstance(value, str):
                    identity[key] = value[:200]
