"""Shortcuts of the call path that must change nothing: the wire form a labelled result hands the
SDK (its own dump, and only while true), the compact JSON, the clean-text fast path and the
middleware router."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from mcp.types import CallToolResult

from bridge import label
from bridge.fence import _CONTROL, cap_string, clean_text, fence_json, fits, json_view
from bridge.label import BridgeError, TextLimits
from bridge.middleware import router, scoped
from bridge.structured import compact
from bridge.summaries import _reasons, name_list, short
from bridge.tools.inspect_render import text_of
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


def test_the_wire_form_is_what_the_sdk_would_dump() -> None:
    host_result = {"state": "ready", "n": 3, "nested": [{"s": "x" * 500, "none": None}]}
    success = label.success(limits=LIMITS, host_result=host_result, summary="Host h", **HEADER)
    failure = label.failure(
        error=BridgeError(reason="timeout", message="m", detail="d"), limits=LIMITS, **HEADER
    )
    for result in (success, failure):
        assert isinstance(result, WireResult)
        assert result.wire() == _dump(result)
    assert failure.wire()["isError"] is True  # type: ignore[index]


def test_a_changed_result_goes_to_the_sdk_as_a_model() -> None:
    result = label.success(limits=LIMITS, host_result={"a": 1}, **HEADER)
    assert isinstance(result, WireResult) and result.wire() is not None
    assert result.model_copy(update={"is_error": True}).wire() is None
    assert result.model_copy(update={"structured_content": {"x": 1}}).wire() is None
    assert result.model_copy().wire() is None and copy.deepcopy(result).wire() is None
    result.content.append(result.content[0])
    assert result.wire() is None
    assert WireResult(content=[]).wire() is None  # not built from parts at all


def test_compact_is_json_dumps_compact_and_copes_with_lone_surrogates() -> None:
    value = {"a": [1, 2.5, True, None], "é": "ü\u2028", "n": 2**70}
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    lone = {"s": "\ud800x"}
    assert compact(lone) == json.dumps(lone, ensure_ascii=False, separators=(",", ":"))


def test_clean_text_fast_path_strips_what_the_pattern_strips() -> None:
    # the fast path returns printable text unchanged: no character the pattern removes is printable
    assert not [c for c in range(0x110000) if _CONTROL.match(chr(c)) and chr(c).isprintable()]
    assert clean_text("a\u202eb\x1bc\td\n") == "abc\td\n"
    assert clean_text("plain é text") == "plain é text"


class _Ctx:
    def __init__(self, method: str) -> None:
        self.method = method


@pytest.mark.parametrize(
    "value",
    [
        {"plain": "short", "n": [1, 2.5, None, True]},
        {"long": "x" * 3000, "nested": [{"k": "é" * 2500}], "quote": 'a"b' * 1000},
        {"unicode": "naïve ☃", "control": "a\u202eb"},
    ],
)
def test_a_json_view_rendered_once_fences_as_fence_json_would(value: dict[str, Any]) -> None:
    """An inspect page renders its answer once (json_view) for every fitting attempt; the fenced
    text is what fence_json renders by itself (nonces aside)."""
    shown, rendered = json_view(value, 2000)
    assert (shown is value) == all(len(s) <= 2000 for s in json.dumps(value).split('"'))
    for total in (0, 50_000):
        alone = fence_json(value, label="HOST RESULT", string_limit=2000, total_limit=total)
        reused = fence_json(
            shown,
            label="HOST RESULT",
            string_limit=2000,
            total_limit=total,
            capped=True,
            rendered=rendered,
        )
        nonce = alone.split()[3]
        assert reused.replace(reused.split()[3], nonce) == alone


def test_summary_values_fast_path_is_the_slow_path() -> None:
    """A short printable host value is shown as is; anything else is cleaned, folded and capped."""
    for value in ["ready", "x" * 80, "x" * 81, "a\nb", "a\u202eb", "tab\there", "", 3, 2.5, True]:
        expected = (
            ("yes" if value else "no")
            if isinstance(value, bool)
            else cap_string(clean_text(str(value)).replace("\n", " "), 80)
        )
        assert short(value) == expected


@pytest.mark.anyio
async def test_router_runs_only_the_layers_of_the_method_in_order() -> None:
    seen: list[str] = []

    def layer(name: str) -> Any:
        async def middleware(ctx: Any, call_next: Any) -> Any:
            seen.append(name)
            return await call_next(ctx)

        return middleware

    route = router(
        [
            scoped({"tools/call"}, layer("guard")),
            layer("all"),
            scoped({"tools/list", "tools/call"}, layer("list-or-call")),
            scoped({"initialize"}, layer("advertise")),
        ]
    )

    async def handler(ctx: Any) -> dict[str, str]:
        seen.append("handler")
        return {"method": ctx.method}

    for method, expected in (
        ("tools/call", ["guard", "all", "list-or-call", "handler"]),
        ("initialize", ["all", "advertise", "handler"]),
        ("x/unknown", ["all", "handler"]),
    ):
        seen.clear()
        assert await route(_Ctx(method), handler) == {"method": method}  # type: ignore[arg-type]
        assert seen == expected


def test_fits_decides_alike_on_short_and_long_texts() -> None:
    """Short texts are searched with a regex, long ones split at quotes: the same answer, which
    is whether any quote-free stretch is longer than the limit."""
    limit = 10
    for length in (5, 11, 39, 40, 41, 400):
        for run in (limit, limit + 1):
            for at in (0, length // 2, max(length - run, 0)):
                body = ['"'] * length
                body[at : at + run] = ["x"] * run
                text = "".join(body[:length])
                longest = max(map(len, text.split('"')))
                assert fits(text, limit) is (longest <= limit), (length, run, at)
    assert fits('{"a":"' + "y" * 50 + '"}', limit) is False
    assert fits('{"a":"b\\"c"}' * 20, limit) is False  # an escaped quote: never sure


def test_inspect_text_of_fast_path_is_the_slow_path() -> None:
    """A clean one-line host string is shown as is; the rest is cleaned, folded and capped."""
    samples = ["pkg/mod.py", "a b", " a", "a ", "a  b", "", "x" * 200, "x" * 201, "tab\tx"]
    samples += ["nl\nx", "bidi\u202ex", "nbsp\u00a0x", "é ☃", "\u2003em"]
    for value in samples:
        flat = " ".join(clean_text(value).split())
        assert text_of(value, 200) == (cap_string(flat, 200) if flat else "''"), repr(value)


def test_the_text_of_a_result_over_ascii_host_data_is_ascii() -> None:
    """One non-ASCII character makes Python store the whole text two bytes a character and the
    wire encoder transcode all of it; the bridge's own words (headline, fences, summary title)
    are ASCII, so an ASCII host result keeps the text ASCII."""
    host_result = {"state": "ready", "servers": [{"id": "p", "detail": "x" * 500}]}
    success = label.success(limits=LIMITS, host_result=host_result, summary="Host h", **HEADER)
    failure = label.failure(
        error=BridgeError(reason="host-unavailable", message="m", stderr_tail="e"),
        limits=LIMITS,
        **HEADER,
    )
    for result in (success, failure):
        text = result.content[0].text  # type: ignore[union-attr]
        assert "<<<UNTRUSTED" in text and text.isascii()


def test_summary_list_fast_paths_are_the_slow_paths() -> None:
    """An empty or non-list value is `none` / nothing without a join; a list reads as before."""
    values: list[Any] = [
        None,
        "",
        "check",
        [],
        [""],
        ["", ""],
        ["a", 3, True],
        list("abcdefghijkl"),
    ]
    values += [{"a": 1}, [{"source": "p", "reason": "r"}, "x", {"source": "q\nz"}] * 3]
    for value in values:
        items = value if isinstance(value, list) else []
        assert name_list(value) == (", ".join(short(v) for v in items[:10]) or "none")
        entries = [d if isinstance(d, dict) else {} for d in items]
        expected = "; ".join(
            f"{short(d.get('source'))}: {short(d.get('reason'))}" for d in entries[:5]
        )
        assert _reasons(value) == expected
