"""The ASP error registry (docs/architecture.md#protocol-map) and the typed exceptions both sides of the wire raise."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

FailClass = Literal["health", "contract", "policy", "input"]


@dataclass(frozen=True)
class ErrorSpec:
    code: int
    name: str
    fail_class: FailClass
    retryable: bool = False


class ErrorCode(Enum):
    """Every error code this project sends, with its registry name and default failClass."""

    PARSE_ERROR = ErrorSpec(-32700, "parse-error", "contract")
    INVALID_REQUEST = ErrorSpec(-32600, "invalid-request", "contract")
    METHOD_NOT_FOUND = ErrorSpec(-32601, "method-not-found", "contract")
    INVALID_PARAMS = ErrorSpec(-32602, "invalid-params", "input")
    INTERNAL_ERROR = ErrorSpec(-32603, "internal-error", "health")
    HEALTH_NOT_READY = ErrorSpec(-32010, "health_not_ready", "health", retryable=True)
    STALE_BASELINE = ErrorSpec(-32011, "stale_baseline", "health", retryable=True)
    SCOPE_DENIED = ErrorSpec(-32012, "scope_denied", "policy")
    INVALID_CHANGESET = ErrorSpec(-32013, "invalid_changeset", "input")
    UNSUPPORTED_VERSION = ErrorSpec(-32014, "unsupported_version", "contract")
    BLOB_UNAVAILABLE = ErrorSpec(-32015, "blob_unavailable", "health")
    CANCELLED = ErrorSpec(-32016, "cancelled", "health", retryable=True)

    @property
    def code(self) -> int:
        return self.value.code

    @classmethod
    def lookup(cls, code: int) -> ErrorCode | None:
        for member in cls:
            if member.value.code == code:
                return member
        return None


class AspError(Exception):
    """A typed JSON-RPC error: raised by handlers, received from peers, always carrying failClass."""

    def __init__(
        self,
        code: ErrorCode | int,
        message: str,
        *,
        fail_class: FailClass | None = None,
        retryable: bool | None = None,
        detail: str | None = None,
    ) -> None:
        spec = code.value if isinstance(code, ErrorCode) else None
        known = ErrorCode.lookup(code) if isinstance(code, int) else code
        self.code: int = spec.code if spec else int(code)  # type: ignore[arg-type]
        self.fail_class: FailClass = fail_class or (known.value.fail_class if known else "health")
        self.retryable = (
            retryable if retryable is not None else bool(known and known.value.retryable)
        )
        self.detail = detail
        self.message = message
        super().__init__(f"{message} (code {self.code}, failClass {self.fail_class})")

    @property
    def name(self) -> str:
        known = ErrorCode.lookup(self.code)
        return known.value.name if known else "error"

    def to_wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"failClass": self.fail_class}
        if self.retryable:
            data["retryable"] = True
        if self.detail is not None:
            data["detail"] = self.detail
        return {"code": self.code, "message": self.message, "data": data}

    @classmethod
    def from_wire(cls, error: Any) -> AspError:
        """Build from a received error object; a malformed one still yields a typed error."""
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            return cls(
                ErrorCode.INTERNAL_ERROR,
                "peer sent a malformed error object",
                fail_class="contract",
            )
        raw_data = error.get("data")
        data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
        fail_class = data.get("failClass")
        if fail_class not in ("health", "contract", "policy", "input"):
            fail_class = None
        detail = data.get("detail")
        return cls(
            error["code"],
            str(error.get("message", "")),
            fail_class=fail_class,
            retryable=bool(data.get("retryable")) if "retryable" in data else None,
            detail=detail if isinstance(detail, str) else None,
        )


class ConnectionClosed(Exception):
    """The peer's stream ended; every pending request fails with this."""


class RequestTimeout(Exception):
    """A request passed its deadline; the peer was sent `$/cancelRequest`."""

    def __init__(self, method: str, timeout: float) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(f"{method} timed out after {timeout:g}s")


class ProtocolViolation(Exception):
    """The peer sent something that breaks the protocol (a malformed or mistyped reply)."""
