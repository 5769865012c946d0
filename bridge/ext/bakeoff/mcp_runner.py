"""The MCP binding: a real `python -m bridge serve` subprocess per case and a real SDK client that
sends the extension's custom `asp/host/*` requests (the same params the native run sends), in
either protocol era and over stdio or streamable HTTP (`VARIANTS`)."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, Any

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from bridge.ext import EXTENSION_ID
from bridge.ext.bakeoff import plan
from bridge.ext.bakeoff.plan import BindingRun, Step
from bridge.ext.bakeoff.workspace import PreparedCase, snapshot

PREFIX = "asp/"
METHOD_NOT_FOUND = -32601
REFUSED_REASON = "refused"
CANCEL_RECORD_WAIT_S = 5.0
STDERR_TAIL_CHARS = 4000
HTTP_START_S = 30.0
_RAW: Any = TypeAdapter(dict[str, Any])  # the envelope as sent, no MCP result model in between


class ExtRequest(types.Request[dict[str, Any] | None, str]):
    """Any custom request of the extension: `asp/host/*` with the outer params verbatim."""

    method: str
    params: dict[str, Any] | None = None


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


class _McpSide:
    """One SDK client session to one bridge subprocess."""

    def __init__(self, client: Client, timeout: float) -> None:
        self.client = client
        self.timeout = timeout

    async def send(self, host_method: str, params: Any) -> Step:
        """Send `asp/<host method>`; the envelope's `hostResult` is the compared result."""
        method = PREFIX + host_method
        started = time.perf_counter()
        seen = [0]

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen[0] += 1

        try:
            envelope = await self.client.session.send_request(
                ExtRequest(method=method, params=params),
                _RAW,
                request_read_timeout_seconds=self.timeout,
                progress_callback=on_progress,
            )
        except MCPError as exc:
            step = _error_step(method, exc, _ms(started))
            step.progress = seen[0]
            return step
        return Step(
            method,
            "result",
            _ms(started),
            result=envelope.get("hostResult"),
            envelope=envelope,
            progress=seen[0],
        )

    async def send_and_cancel(self, host_method: str, params: Any, after_s: float) -> Step:
        """Send, cancel from the MCP side after *after_s*, then read what the bridge recorded."""
        method = PREFIX + host_method
        started = time.perf_counter()
        outcome: dict[str, Step] = {}
        with anyio.move_on_after(after_s):
            outcome["step"] = await self.send(host_method, params)
        if "step" in outcome:
            step = outcome["step"]
            step.cancellation = {"sent": False, "hostReply": {"kind": step.kind}}
            return step
        latency = _ms(started)
        record = await self._cancel_record(method)
        return Step(method, "cancelled", latency, cancellation=record)

    async def _cancel_record(self, method: str) -> dict[str, Any]:
        """The bridge's trace entry for the cancelled call, once the host's late answer landed."""
        entry: dict[str, Any] = {}
        with anyio.move_on_after(CANCEL_RECORD_WAIT_S):
            while True:
                result = await self.client.call_tool("asp_debug_trace", {"limit": 50})
                data = (result.structured_content or {}).get("bridgeResult") or {}
                for item in reversed(data.get("entries", [])):
                    if str(item.get("origin", "")).startswith(method + "#"):
                        entry = item
                        break
                if entry.get("lateReply") or entry.get("outcome") not in (
                    None,
                    "pending",
                    "cancelled",
                ):
                    break
                await anyio.sleep(0.05)
        reply = entry.get("lateReply")
        return {
            "sent": bool(entry.get("cancelSent")),
            "hostReply": {"kind": reply, "code": entry.get("lateReplyCode")} if reply else None,
            "trace": {
                k: entry.get(k)
                for k in ("outcome", "requestId", "cancelSent", "lateReply", "lateReplyCode")
            },
        }


def _error_step(method: str, exc: MCPError, latency: float) -> Step:
    data: dict[str, Any] = exc.data if isinstance(exc.data, dict) else {}
    error: dict[str, Any] = data["error"] if isinstance(data.get("error"), dict) else {}
    reason = error.get("reason")
    kind = "error"
    if exc.code == METHOD_NOT_FOUND and not data:
        kind = "not-offered"
    elif reason == REFUSED_REASON:
        kind = "refused"
    return Step(
        method,
        kind,  # type: ignore[arg-type]
        latency,
        error={
            "code": exc.code,
            "message": exc.message[:500],
            "failClass": error.get("failClass"),
            "reason": reason,
        },
        envelope=data or None,
    )


ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
VARIANTS: tuple[tuple[str, str], ...] = (
    ("legacy", "stdio"),
    ("auto", "stdio"),
    ("legacy", "streamable-http"),
    ("auto", "streamable-http"),
)


def variant_name(mode: str, transport: str) -> str:
    return f"{ERAS[mode]}/{'http' if transport == 'streamable-http' else transport}"


def _bridge_args(prepared: PreparedCase, host_template: str, timeout: float) -> list[str]:
    argv = plan.host_argv(host_template, prepared, keep_repo_placeholder=True)
    return [
        "-m",
        "bridge",
        "serve",
        "--repo",
        str(prepared.repo),
        "--host",
        shlex.join(argv),
        "--timeout",
        str(timeout),
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def _http_bridge(
    args: list[str], env: dict[str, str], cwd: str, errlog: IO[str]
) -> AsyncIterator[str]:
    """A bridge subprocess serving streamable HTTP on a free local port; yields its URL."""
    port = _free_port()
    process = await anyio.open_process(
        [sys.executable, *args, "--transport", "streamable-http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=errlog,
        env=env,
        cwd=cwd,
    )
    try:
        with anyio.fail_after(HTTP_START_S):
            while True:
                if process.returncode is not None:
                    raise RuntimeError("the bridge exited before listening")
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    await anyio.sleep(0.05)
                    continue
                await stream.aclose()
                break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(5):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()


async def run_mcp(
    prepared: PreparedCase,
    host_template: str,
    *,
    timeout: float = 30.0,
    mode: str = "legacy",
    transport: str = "stdio",
) -> BindingRun:
    """Carry the case through a fresh bridge subprocess with the extension enabled, in protocol
    era *mode* (`legacy`: the 2025-11-25 handshake; `auto`: 2026-07-28 `server/discover`) over
    *transport* (`stdio` or `streamable-http`)."""
    args = _bridge_args(prepared, host_template, timeout)
    env = {**os.environ, "ASP_HOST_TRUSTED_DIR": str(prepared.trusted_dir)}
    before = await anyio.to_thread.run_sync(snapshot, prepared.repo)
    run = BindingRun("mcp-extension", variant=variant_name(mode, transport))
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            async with AsyncExitStack() as stack:
                target: Any
                if transport == "stdio":
                    params = StdioServerParameters(
                        command=sys.executable, args=args, env=env, cwd=str(prepared.repo)
                    )
                    target = stdio_client(params, errlog=errlog)
                else:
                    target = await stack.enter_async_context(
                        _http_bridge(args, env, str(prepared.repo), errlog)
                    )
                client = await stack.enter_async_context(
                    Client(target, mode=mode, read_timeout_seconds=timeout + 10)
                )
                caps = client.server_capabilities
                for name in ("experimental", "extensions"):
                    if EXTENSION_ID in ((getattr(caps, name, None) or {}) if caps else {}):
                        run.advertised_in.append(name)
                if not run.advertised_in:
                    run.status, run.reason = (
                        "failed",
                        f"the bridge does not advertise {EXTENSION_ID}",
                    )
                else:
                    await _drive(_McpSide(client, timeout), prepared, run)
        except (
            Exception
        ) as exc:  # the bridge failed to start or died: a failed run, with the reason
            leaf = _leaf(exc)
            run.status, run.reason = "failed", f"{leaf.__class__.__name__}: {str(leaf)[:300]}"
        errlog.seek(0)
        run.stderr_tail = errlog.read()[-STDERR_TAIL_CHARS:]
    run.workspace_unchanged = await anyio.to_thread.run_sync(snapshot, prepared.repo) == before
    return run


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _drive(side: _McpSide, prepared: PreparedCase, run: BindingRun) -> None:
    status = await side.send("host/status", None)
    run.setup.append(status)
    if status.kind != "result":
        run.status, run.reason = "failed", f"asp/host/status failed: {status.error}"
        return
    run.host = (status.envelope or {}).get("host")
    request = prepared.case.request
    if request.action == "call":
        run.steps.append(await side.send(request.method, plan.evaluate_params(prepared)))
        if request.warm:
            run.warm = await side.send(request.method, plan.evaluate_params(prepared))
    elif request.action == "fast-path":
        run.steps.append(await side.send("check/evaluate", plan.fast_path_params(prepared)))
    elif request.action == "cancel":
        run.steps.append(
            await side.send_and_cancel(
                request.method, plan.evaluate_params(prepared), request.cancel_after_s
            )
        )
    else:
        await _drive_edit(side, prepared, run)


async def _drive_edit(side: _McpSide, prepared: PreparedCase, run: BindingRun) -> None:
    """Edit-plan through the extension; an apply is always sent so its refusal is on record."""
    step = await side.send("host/requestEditPlan", plan.edit_plan_params(prepared))
    run.steps.append(step)
    if prepared.case.request.action != "apply":
        return
    proposal = (step.result or {}).get("proposal") if isinstance(step.result, dict) else None
    proposal_id = proposal.get("proposalId") if isinstance(proposal, dict) else None
    if not isinstance(proposal_id, str):
        proposal_id = "bakeoff-no-proposal"
    run.steps.append(
        await side.send("host/applyProposal", plan.apply_params(prepared, proposal_id))
    )
