"""`HostClient`: one supervised host process, typed `host/*` calls, deadlines, restarts and a trace.

Use it as an async context manager; the host starts lazily on the first call. When the host
exits every in-flight call fails at once with `HostUnavailable` (exit code, stderr tail); the next
call restarts it after an exponential backoff; after `max_failed_starts` consecutive failed
starts (spawn error, or exit before any answer) it stays down with the reason. This module is
the call path; process supervision is `supervision.py`, the debug view `introspection.py`.
"""

from __future__ import annotations

import contextvars
import time
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
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
from host_client.errors import HostProtocolError, HostUnavailable
from host_client.introspection import HostIntrospection
from host_client.methods import (
    RESULT_MODELS,
    ApplyProposalResult,
    PolicyResult,
    PutBlobResult,
    RequestEditPlanResult,
    WorkingChangesetResult,
)
from host_client.observe import LatencyStats, Trace, TraceEntry
from host_client.process import HostInstance
from host_client.settings import HostClientSettings

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


class HostClient(HostIntrospection):
    """The outer-seam client for one host command; safe for many concurrent callers."""

    def __init__(self, settings: HostClientSettings) -> None:
        self.settings = settings
        self.stats = LatencyStats(settings.latency_window)
        self.trace = Trace(settings.trace_size)
        self._init_supervision()
        self._invalid_lines = 0
        self._in_flight = 0
        self.identity: dict[str, Any] = {}

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
