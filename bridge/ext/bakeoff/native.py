"""The native binding: JSON-RPC 2.0 over a fresh host process's stdio, one process per case.

It uses the shared `JsonRpcEndpoint` directly rather than the bridge's `HostClient`: the native
side is the baseline the extension is measured against, so it must be the plain binding, and the
cancellation case needs the wire id to send `$/cancelRequest` and still await the host's answer.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from subprocess import PIPE
from typing import Any

import anyio
from anyio.abc import Process

from asp_protocol.errors import AspError, ConnectionClosed, ProtocolViolation, RequestTimeout
from asp_protocol.jsonrpc import CANCEL_METHOD, JsonRpcEndpoint, WireEvent
from bridge.ext.bakeoff import plan
from bridge.ext.bakeoff.plan import BindingRun, Step
from bridge.ext.bakeoff.workspace import PreparedCase, snapshot

log = logging.getLogger(__name__)
STDERR_LINES = 200
STDERR_LINE_BYTES = 2000  # bytes kept of one stderr line (500 characters are shown)


def _error_dict(error: AspError) -> dict[str, Any]:
    return {
        "code": error.code,
        "message": error.message[:500],
        "failClass": error.fail_class,
        "detail": (error.detail or "")[:500] or None,
    }


class _NativeHost:
    """One host process and the endpoint over its stdio; stderr drained into a bounded buffer."""

    def __init__(self, process: Process) -> None:
        self.process = process
        assert process.stdout is not None and process.stdin is not None
        self.sent_ids: dict[str, list[int | str]] = {}
        self.endpoint = JsonRpcEndpoint(
            process.stdout, process.stdin, name="native-host", on_wire=self._on_wire
        )
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)

    def _on_wire(self, event: WireEvent) -> None:
        if event.direction == "out" and event.kind == "request" and event.method:
            self.sent_ids.setdefault(event.method, []).append(event.id)  # type: ignore[arg-type]

    async def drain_stderr(self) -> None:
        if self.process.stderr is None:
            return
        pending = b""
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            async for chunk in self.process.stderr:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                pending = pending[:STDERR_LINE_BYTES]  # a line without end keeps only its head
                self.stderr.extend(
                    line[:STDERR_LINE_BYTES].decode("utf-8", "replace")[:500] for line in lines
                )

    async def call(self, method: str, params: Any, timeout: float) -> Step:
        started = time.perf_counter()
        try:
            result = await self.endpoint.request(method, params, timeout=timeout)
        except AspError as error:
            return Step(method, "error", _ms(started), error=_error_dict(error))
        except (RequestTimeout, ConnectionClosed, ProtocolViolation) as exc:
            return Step(method, "failed", _ms(started), error={"message": str(exc)[:500]})
        return Step(method, "result", _ms(started), result=result)

    async def call_and_cancel(
        self, method: str, params: Any, after_s: float, timeout: float
    ) -> Step:
        """Send *method*, then `$/cancelRequest` for its wire id, and wait for the host's answer."""
        outcome: dict[str, Step] = {}

        async def send() -> None:
            outcome["step"] = await self.call(method, params, timeout)

        already = len(self.sent_ids.get(method, []))
        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            await anyio.sleep(after_s)
            ids = self.sent_ids.get(method, [])
            sent = len(ids) > already and "step" not in outcome
            if sent:
                await self.endpoint.notify(CANCEL_METHOD, {"id": ids[already]})
        step = outcome["step"]
        reply: dict[str, Any]
        if step.kind == "error" and step.error is not None:
            reply = {
                "kind": "error",
                "code": step.error["code"],
                "failClass": step.error["failClass"],
            }
        elif step.kind == "result":
            reply = {"kind": "result", "decision": _decision(step.result)}
        else:
            reply = {"kind": step.kind}
        step.cancellation = {"sent": sent, "hostReply": reply}
        if sent:
            step.kind = "cancelled"
        return step


def _decision(result: Any) -> Any:
    return result.get("decision") if isinstance(result, dict) else None


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


async def run_native(
    prepared: PreparedCase, host_template: str, *, timeout: float = 30.0
) -> BindingRun:
    """Carry the case over the native binding against a fresh host process."""
    argv = plan.host_argv(host_template, prepared, keep_repo_placeholder=False)
    env = {**os.environ, "ASP_HOST_TRUSTED_DIR": str(prepared.trusted_dir)}
    before = await anyio.to_thread.run_sync(snapshot, prepared.repo)
    run = BindingRun("native")
    try:
        process = await anyio.open_process(
            argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, cwd=str(prepared.repo), env=env
        )
    except OSError as exc:
        return BindingRun("native", "failed", f"host could not start: {exc}")
    host = _NativeHost(process)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(host.endpoint.serve)
            tg.start_soon(host.drain_stderr)
            try:
                await _drive(host, prepared, run, timeout)
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process)
                tg.cancel_scope.cancel()
    finally:
        run.stderr_tail = "\n".join(host.stderr)
    run.workspace_unchanged = await anyio.to_thread.run_sync(snapshot, prepared.repo) == before
    return run


async def _drive(
    host: _NativeHost, prepared: PreparedCase, run: BindingRun, timeout: float
) -> None:
    status = await host.call("host/status", None, timeout)
    run.setup.append(status)
    if status.kind != "result":
        run.status, run.reason = "failed", f"host/status failed: {status.error}"
        return
    run.host = _identity(status.result)
    action = prepared.case.request.action
    call: Callable[[str, Any], Awaitable[Step]] = lambda m, p: host.call(m, p, timeout)  # noqa: E731
    if action == "call":
        request = prepared.case.request
        run.steps.append(await call(request.method, plan.evaluate_params(prepared)))
        if request.warm:
            run.warm = await call(request.method, plan.evaluate_params(prepared))
    elif action == "fast-path":
        run.steps.append(await call("check/evaluate", plan.fast_path_params(prepared)))
    elif action == "cancel":
        request = prepared.case.request
        run.steps.append(
            await host.call_and_cancel(
                request.method, plan.evaluate_params(prepared), request.cancel_after_s, timeout
            )
        )
    else:
        await _drive_edit(call, prepared, run)


async def _drive_edit(
    call: Callable[[str, Any], Awaitable[Step]], prepared: PreparedCase, run: BindingRun
) -> None:
    """Edit-plan (and apply) cases: not-run, with the host's own reason, when it has no edit profile."""
    capabilities = await call("host/capabilities", None)
    reason = plan.edit_unavailable_reason(capabilities.result)
    plan_step = await call("host/requestEditPlan", plan.edit_plan_params(prepared))
    run.steps.append(plan_step)
    if plan_step.kind != "result":
        error = plan_step.error or {}
        detail = (
            f"host answered {error.get('code')} ({error.get('failClass')}): {error.get('message')}"
        )
        run.status, run.reason = "not-run", f"{reason or 'edit plan refused'}; {detail}"
        return
    if prepared.case.request.action == "apply":
        proposal = (
            plan_step.result.get("proposal", {}) if isinstance(plan_step.result, dict) else {}
        )
        proposal_id = proposal.get("proposalId") if isinstance(proposal, dict) else None
        if not isinstance(proposal_id, str):
            run.status, run.reason = "not-run", "the host's edit plan carries no proposalId"
            return
        run.steps.append(await call("host/applyProposal", plan.apply_params(prepared, proposal_id)))


def _identity(status: Any) -> dict[str, Any] | None:
    host = status.get("host") if isinstance(status, dict) else None
    if not isinstance(host, dict):
        return None
    return {k: host.get(k) for k in ("name", "version", "outerProtocol", "bindingCandidate")}


async def _stop(process: Process) -> None:
    """Close stdin (the host's cue to exit), then terminate and kill if it lingers."""
    with suppress(Exception):
        if process.stdin is not None:
            await process.stdin.aclose()
    with anyio.move_on_after(5):
        await process.wait()
        return
    with suppress(ProcessLookupError):
        process.terminate()
    with anyio.move_on_after(2):
        await process.wait()
        return
    with suppress(ProcessLookupError):
        process.kill()
    await process.wait()
