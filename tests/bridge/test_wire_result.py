"""The wire form a labelled result hands the SDK is the SDK's own dump of it, and only while true."""

from __future__ import annotations

import json

from mcp.types import CallToolResult

from bridge import label
from bridge.label import BridgeError, TextLimits
from bridge.structured import compact
from bridge.wire_result import WireResult

LIMITS = TextLimits(string_chars=100, total_chars=2000, max_result_bytes=10_000)
HEADER: label.Header = {
    "tool": "asp_status",
    "method": "host/status",
    "call_site": "interactive",
    "host": {"name": "h", "pid": 7},
    "latency_ms": 1.5,
}


def _dump(result: CallToolResult) -> dict:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def _without_defaults(dumped: dict) -> dict:
    return {k: v for k, v in dumped.items() if k != "resultType"}  # the schema dump drops it


def test_the_wire_form_is_what_the_sdk_would_dump() -> None:
    host_result = {"state": "ready", "n": 3, "nested": [{"s": "x" * 500, "none": None}]}
    success = label.success(limits=LIMITS, host_result=host_result, summary="Host h", **HEADER)
    failure = label.failure(
        error=BridgeError(reason="timeout", message="m", detail="d"), limits=LIMITS, **HEADER
    )
    for result in (success, failure):
        assert isinstance(result, WireResult)
        assert result.wire() == _without_defaults(_dump(result))
    assert failure.wire()["isError"] is True  # type: ignore[index]


def test_a_changed_result_goes_to_the_sdk_as_a_model() -> None:
    result = label.success(limits=LIMITS, host_result={"a": 1}, **HEADER)
    assert isinstance(result, WireResult) and result.wire() is not None
    assert result.model_copy(update={"is_error": True}).wire() is None
    assert result.model_copy(update={"structured_content": {"x": 1}}).wire() is None
    result.content.append(result.content[0])
    assert result.wire() is None
    assert WireResult(content=[]).wire() is None  # not built from parts at all


def test_compact_is_json_dumps_compact_and_copes_with_lone_surrogates() -> None:
    value = {"a": [1, 2.5, True, None], "é": "ü\u2028", "n": 2**70}
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    lone = {"s": "\ud800x"}
    assert compact(lone) == json.dumps(lone, ensure_ascii=False, separators=(",", ":"))
