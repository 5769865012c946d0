"""What `asp_debug_host` shows about a `HostClient`: process, restarts, exits, stderr, latency."""

from __future__ import annotations

import time
from typing import Any

from host_client.observe import LatencyStats
from host_client.supervision import STDERR_TAIL_BYTES, HostSupervision


class HostIntrospection(HostSupervision):
    """The debug view of `HostClient` (a mixin over its supervision state)."""

    stats: LatencyStats
    identity: dict[str, Any]
    _in_flight: int
    _invalid_lines: int

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
