"""`HostClient`: one supervised host process, typed `host/*` calls, deadlines, restarts and a trace.

Use it as an async context manager; the host starts lazily on the first call. When the host
exits every in-flight call fails at once with `HostUnavailable` (exit code, stderr tail); the next
call restarts it after an exponential backoff; after `max_failed_starts` consecutive failed
starts (spawn error, or exit before any answer) it stays down with the reason. This module is
the call path; it owns a `HostSupervisor` (`supervision.py`) for the process and builds the
debug view with `introspection.py`. Typed methods exist for the calls whose parsed model someone
reads (status, capabilities, authority status); every other method goes through `call`, which
still checks the result against the method's model. `host/applyProposal` is never sent.
"""

from __future__ import annotations

import contextvars
import time
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar

import anyio
from pydantic import BaseModel, ValidationError

from asp_protocol.errors import AspError, ConnectionClosed, ProtocolViolation, RequestTimeout
from asp_protocol.jsonrpc import CANCEL_METHOD, ProgressCallback, WireEvent
from asp_protocol.models import AuthorityStatusResult, CapabilitiesResult, StatusResult
from host_client import introspection
from host_client.errors import HostProtocolError, HostUnavailable
from host_client.methods import NEVER_SENT, RESULT_MODELS
from host_client.observe import LatencyStats, Trace, TraceEntry
from host_client.process import HostInstance
from host_client.settings import HostClientSettings
from host_client.supervision import HostState, HostSupervisor

ModelT = TypeVar("ModelT", bound=BaseModel)
_current_entry: contextvars.ContextVar[TraceEntry | None] = contextvars.ContextVar(
    "host_client_trace_entry", default=None
)
_MAX_TRACKED_IDS = 1024


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
        self.host = HostSupervisor(settings, self._on_wire)
        self._invalid_lines = 0
        self._in_flight = 0
        self.identity: dict[str, Any] = {}

    # -- lifecycle (the supervisor's) -----------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.host.open()
        return self

    async def __aexit__(self, *_exc_info: object) -> None:
        await self.host.aclose()

    async def aclose(self) -> None:
        """Stop the host politely and end supervision."""
        await self.host.aclose()

    async def start(self) -> None:
        """Start the host now instead of on the first call (raises HostUnavailable)."""
        await self.host.start()

    def start_in_background(self) -> None:
        """Begin starting the host without waiting; a failure is recorded like any failed start."""
        self.host.start_in_background()

    def reset(self) -> None:
        """Leave the permanent `down` state so the next call tries again (an operator action)."""
        self.host.reset()

    @property
    def pid(self) -> int | None:
        """The running host's pid, None when no host process is up."""
        return self.host.pid

    @property
    def state(self) -> HostState:
        return self.host.state

    def debug_info(self) -> dict[str, Any]:
        """Everything `asp_debug_host` shows; the stderr tail is raw host text (untrusted)."""
        return introspection.debug_info(
            self.host,
            stats=self.stats,
            identity=self.identity,
            in_flight=self._in_flight,
            invalid_lines=self._invalid_lines,
        )

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
        session: str | None = None,
    ) -> dict[str, Any]:
        """Send one outer-seam request and return the host's result object verbatim.

        Raises `AspError` (the host answered with an error), `RequestTimeout`, `HostUnavailable`
        or `HostProtocolError` (the reply is not an object, or fails the method's result model).
        A method the client never sends (`host/applyProposal`) raises `ValueError` unsent.
        """
        if method in NEVER_SENT:
            raise ValueError(f"{method} is never sent by this client")
        entry = TraceEntry(
            method=method,
            call_site=call_site,
            origin=origin,
            started_at=time.time(),
            session=session,
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
        instance = await self.host.ensure_instance()
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
            raise self.host.unavailable(instance) from None
        except ProtocolViolation as exc:
            self.host.mark_answered(instance)
            raise HostProtocolError(method, str(exc)) from None
        except AspError:
            self.host.mark_answered(instance)
            raise
        self.host.mark_answered(instance)
        if not isinstance(result, dict):
            raise HostProtocolError(method, f"result is {type(result).__name__}, not an object")
        _remember_identity(self.identity, result)
        return result

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
