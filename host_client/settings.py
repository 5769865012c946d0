"""How to launch and supervise a host: everything comes from configuration, nothing from a caller."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from asp_protocol import DEFAULT_MAX_LINE_BYTES


@dataclass(frozen=True)
class HostClientSettings:
    """The host argv (already expanded), its workspace and the supervision limits."""

    argv: tuple[str, ...]
    cwd: Path
    env: dict[str, str] | None = None
    timeout: float = 60.0
    max_failed_starts: int = 5
    backoff_initial: float = 0.1
    backoff_max: float = 5.0
    stderr_buffer_bytes: int = 64 * 1024
    trace_size: int = 200
    latency_window: int = 2048
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    exit_grace: float = 2.0

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("the host command is empty")
        if self.max_failed_starts < 1:
            raise ValueError("max_failed_starts must be at least 1")
