"""Answers to an endpoint's own requests: telling a line that is one whole reply apart, and
settling the request waiting for it.

A reply is settled from two places in `jsonrpc.JsonRpcEndpoint`: its read loop, and the pipe's
read callback for a reply that arrives alone in one chunk (early.py: a round trip then costs one
loop turn less). Both go through `settle`, so a reply means the same thing either way.
"""

from __future__ import annotations

from typing import Any

from asp_protocol.errors import AspError, ProtocolViolation
from asp_protocol.rpc_types import BadMessage, Pending, decode_message


def lone_message(chunk: bytes, max_line_bytes: int) -> tuple[dict[str, Any], int] | None:
    """(message, size) when *chunk* is exactly one whole line within *max_line_bytes* holding a
    JSON-RPC message; None for anything else, which the read loop then reads as usual."""
    if chunk.find(b"\n") != len(chunk) - 1 or len(chunk) > max_line_bytes:
        return None
    try:
        return decode_message(chunk[:-1])
    except BadMessage:
        return None


def is_reply(message: dict[str, Any]) -> bool:
    """A response: an id and a result or an error, no method."""
    return (
        "method" not in message and "id" in message and ("result" in message or "error" in message)
    )


def reply_error_code(message: dict[str, Any]) -> int | None:
    """The integer `error.code` of an error reply, else None (what the wire trace records)."""
    error = message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else None


def settle(pending: Pending, message: dict[str, Any]) -> None:
    """Give the waiting request its result or its typed error, and wake it."""
    if "error" in message and "result" in message:
        pending.error = ProtocolViolation("response carries both result and error")
    elif "error" in message:
        pending.error = AspError.from_wire(message["error"])
    else:
        pending.result = message["result"]
    pending.done.set()
