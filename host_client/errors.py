"""Typed failures of the host client; a host error proper stays an `asp_protocol.errors.AspError`."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field


class HostClientError(Exception):
    """Base class for failures the host client itself detects."""


@dataclass(eq=False)
class HostUnavailable(HostClientError):
    """The host process is not running: it could not start, it exited, or it is down for good."""

    reason: str
    _: KW_ONLY
    exit_code: int | None = None
    stderr_tail: str = field(default="", repr=False)  # untrusted host text: not in logs
    permanent: bool = False

    def __post_init__(self) -> None:
        code = f" (exit code {self.exit_code})" if self.exit_code is not None else ""
        super().__init__(f"{self.reason}{code}")


class HostProtocolError(HostClientError):
    """The host answered, but the answer breaks the outer-seam contract (wrong shape, wrong type)."""

    def __init__(self, method: str, detail: str) -> None:
        self.method = method
        self.detail = detail
        super().__init__(f"{method}: malformed host reply: {detail}")
