"""Typed failures of the host client; a host error proper stays an `asp_protocol.errors.AspError`."""

from __future__ import annotations


class HostClientError(Exception):
    """Base class for failures the host client itself detects."""


class HostUnavailable(HostClientError):
    """The host process is not running: it could not start, it exited, or it is down for good."""

    def __init__(
        self,
        reason: str,
        *,
        exit_code: int | None = None,
        stderr_tail: str = "",
        permanent: bool = False,
    ) -> None:
        self.reason = reason
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        self.permanent = permanent
        code = f" (exit code {exit_code})" if exit_code is not None else ""
        super().__init__(f"{reason}{code}")


class HostProtocolError(HostClientError):
    """The host answered, but the answer breaks the outer-seam contract (wrong shape, wrong type)."""

    def __init__(self, method: str, detail: str) -> None:
        self.method = method
        self.detail = detail
        super().__init__(f"{method}: malformed host reply: {detail}")
