"""One deadline and one progress counter per MCP request, shared by every host call it makes.

Clients give up on a tool call at about 60 s (Claude Code, the TypeScript SDK); the bridge's
per-call deadline (`timeout`, default 50 s) is below that, so a slow host ends in the bridge's own
typed `reason: timeout` (and `$/cancelRequest`) rather than the client's bare timeout. The
deadline covers the whole request — a migration check's three host calls share it — and what is
left of it is sent to the host as `timeoutMs` on the methods that take one, a little early, so the
host can still answer with its own degraded result.

Progress values must grow within one request; host calls of one request share one counter here.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

TIMEOUT_MS_METHODS = frozenset({"host/evaluateChangeset", "host/queryInspect"})
HOST_MARGIN_S = 1.0  # the host is asked to finish this much before the bridge gives up
BUDGETED = frozenset({"tools/call", "resources/read"})


@dataclass
class Budget:
    """The deadline of one MCP request and the progress reported for it so far."""

    deadline: float
    progress: int = 0
    seen: set[str] = field(default_factory=set)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def next_progress(self) -> int:
        self.progress += 1
        return self.progress


_current: ContextVar[Budget | None] = ContextVar("asp_bridge_budget", default=None)


def current() -> Budget | None:
    return _current.get()


def host_timeout(default: float | None) -> float | None:
    """Seconds a host call may take now: what is left of the request's deadline, else *default*
    (None: the host client's own setting)."""
    budget = _current.get()
    return default if budget is None else max(budget.remaining(), 0.001)


def expired() -> bool:
    """True when the current request has no time left for another host call."""
    budget = _current.get()
    return budget is not None and budget.remaining() <= 0


def with_host_budget(method: str, params: Any) -> Any:
    """*params* plus `timeoutMs` (the remaining budget minus a margin) for methods that take it,
    unless the caller set one already."""
    budget = _current.get()
    if budget is None or method not in TIMEOUT_MS_METHODS or not isinstance(params, dict):
        return params
    if "timeoutMs" in params:
        return params
    left = budget.remaining() - min(HOST_MARGIN_S, budget.remaining() / 10)
    return {**params, "timeoutMs": max(1, int(left * 1000))}


def middleware(timeout: Callable[[], float]) -> Any:
    """Start the request's budget (*timeout* seconds) for tool calls and resource reads."""

    async def budget(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in BUDGETED:
            return await call_next(ctx)
        token = _current.set(Budget(time.monotonic() + timeout()))
        try:
            return await call_next(ctx)
        finally:
            _current.reset(token)

    return budget


ReportProgress = Callable[[float, float | None, str | None], Awaitable[None]]


async def say(report: ReportProgress | None, message: str, total: float | None = None) -> None:
    """A readable bridge progress message (no-op without a client progress token)."""
    budget = _current.get()
    if report is None or budget is None:
        return
    await report(budget.next_progress(), total, message)
