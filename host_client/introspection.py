"""What `asp_debug_host` shows about a `HostClient`: process, restarts, exits, stderr, latency."""

from __future__ import annotations

import time
from typing import Any

from host_client.observe import LatencyStats
from host_client.supervision import STDERR_TAIL_BYTES, HostSupervisor


def debug_info(
    host: HostSupervisor,
    *,
    stats: LatencyStats,
    identity: dict[str, Any],
    in_flight: int,
    invalid_lines: int,
) -> dict[str, Any]:
    """Everything `asp_debug_host` shows; the stderr tail is raw host text (untrusted)."""
    record = host.record()
    instance, last, exit_info = record.current, record.last, record.last_exit
    running = instance is not None and instance.alive
    return {
        "command": list(host.settings.argv),
        "cwd": str(host.settings.cwd),
        "state": host.state,
        "pid": instance.pid if running and instance else None,
        "startedAt": _iso(instance.started_at) if running and instance else None,
        "uptimeSeconds": round(time.time() - instance.started_at, 3)
        if running and instance
        else None,
        "starts": record.starts,
        "restarts": max(0, record.starts - 1),
        "failedStartsInRow": record.failed_starts,
        "maxFailedStarts": host.settings.max_failed_starts,
        "downReason": record.down_reason,
        "lastExit": None
        if exit_info is None
        else {
            "exitCode": exit_info.exit_code,
            "reason": exit_info.reason,
            "at": _iso(exit_info.at),
            "answeredBeforeExit": exit_info.answered,
        },
        "inFlight": in_flight,
        "timeoutSeconds": host.settings.timeout,
        "invalidLinesFromHost": invalid_lines,
        "stderrBytesTotal": last.stderr.total if last else 0,
        "stderrBytesDropped": last.stderr.dropped if last else 0,
        "stderrTail": last.stderr.tail(STDERR_TAIL_BYTES) if last else "",
        "hostIdentity": dict(identity),
        "latency": stats.snapshot(),
    }


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
