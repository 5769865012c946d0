"""Per-method latency figures and a bounded, payload-free trace of recent host exchanges."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Outcome = Literal[
    "pending", "ok", "host-error", "timeout", "cancelled", "host-unavailable", "host-protocol-error"
]


@dataclass
class TraceEntry:
    """One exchange with the host: sizes and a few safe fields only, never params or results."""

    method: str
    call_site: str | None
    origin: str | None
    started_at: float
    request_id: int | str | None = None
    request_bytes: int = 0
    response_bytes: int = 0
    duration_ms: float | None = None
    outcome: Outcome = "pending"
    error_code: int | None = None
    fail_class: str | None = None
    progress_events: int = 0
    cancel_sent: bool = False
    late_reply: str | None = None
    late_reply_code: int | None = None
    host_pid: int | None = None
    session: str | None = None  # which MCP session asked (HTTP: each sees only its own)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return {
            "method": data["method"],
            "callSite": data["call_site"],
            "origin": data["origin"],
            "startedAt": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.started_at))
            + f".{int((self.started_at % 1) * 1000):03d}Z",
            "requestId": data["request_id"],
            "requestBytes": data["request_bytes"],
            "responseBytes": data["response_bytes"],
            "durationMs": None if self.duration_ms is None else round(self.duration_ms, 3),
            "outcome": data["outcome"],
            "errorCode": data["error_code"],
            "failClass": data["fail_class"],
            "progressEvents": data["progress_events"],
            "cancelSent": data["cancel_sent"],
            "lateReply": data["late_reply"],
            "lateReplyCode": data["late_reply_code"],
            "hostPid": data["host_pid"],
        }


@dataclass
class _MethodStats:
    count: int = 0
    errors: int = 0
    max_ms: float = 0.0
    window: deque[float] = field(default_factory=deque)


def _percentile(ordered: list[float], fraction: float) -> float:
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


class LatencyStats:
    """Count, error count, p50, p90 and max per method, over a bounded window of recent calls."""

    def __init__(self, window: int) -> None:
        self._window = max(1, window)
        self._methods: dict[str, _MethodStats] = {}

    def record(self, method: str, duration_ms: float, *, ok: bool) -> None:
        stats = self._methods.get(method)
        if stats is None:
            stats = self._methods[method] = _MethodStats(window=deque(maxlen=self._window))
        stats.count += 1
        if not ok:
            stats.errors += 1
        stats.max_ms = max(stats.max_ms, duration_ms)
        stats.window.append(duration_ms)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for method, stats in sorted(self._methods.items()):
            ordered = sorted(stats.window)
            out[method] = {
                "count": stats.count,
                "errors": stats.errors,
                "p50Ms": round(_percentile(ordered, 0.5), 3),
                "p90Ms": round(_percentile(ordered, 0.9), 3),
                "maxMs": round(stats.max_ms, 3),
            }
        return out


class Trace:
    """The last *size* exchanges, oldest first."""

    def __init__(self, size: int) -> None:
        self._entries: deque[TraceEntry] = deque(maxlen=max(1, size))

    def add(self, entry: TraceEntry) -> None:
        self._entries.append(entry)

    def entries(self, limit: int | None = None) -> list[TraceEntry]:
        items = list(self._entries)
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    @property
    def capacity(self) -> int:
        return self._entries.maxlen or 0
