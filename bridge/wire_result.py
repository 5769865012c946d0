"""A labelled tool result that hands the SDK its wire form, so the SDK does not dump it again.

The SDK turns a handler's `CallToolResult` into a dict with `model_dump` (one walk over the whole
result), then validates and dumps that dict against the protocol version's result schema (a
second walk), then serializes the response (a third). The bridge builds every tool result from
plain parts (bridge/label.py), so the dict the first walk would produce is known already: the
`tools/call` handler (bridge/dispatch.py) returns it instead of the model, and the SDK's schema check and serialization
run on it unchanged. Only a result whose fields are still the objects it was built from is
answered that way; anything else (another tool's result, a copy with an update) goes to the SDK
as the model it is.
"""

from __future__ import annotations

from typing import Any, cast

from mcp.types import CallToolResult, TextContent

Parts = tuple[str, dict[str, Any], bool, dict[str, Any]]


class WireResult(CallToolResult):
    """A `CallToolResult` that remembers the parts it was built from (see the module doc).

    They are kept in a slot, not a pydantic private attribute: a private attribute is set and
    read through `BaseModel.__setattr__` / `__getattr__` (several microseconds a read, the
    construction half again), the slot is a plain attribute. A copy of the model (`model_copy`,
    `deepcopy`) does not carry it, so a copy goes to the SDK as a model."""

    __slots__ = ("_wire_parts",)

    def wire(self) -> dict[str, Any] | None:
        """What `model_dump(by_alias=True, mode="json", exclude_none=True)` would give before the
        SDK's own schema dump, or None when a field no longer holds what it was built from."""
        parts = cast(Parts | None, getattr(self, "_wire_parts", None))
        if parts is None or len(self.content) != 1:
            return None
        text, structured, is_error, meta = parts
        block = self.content[0]
        if not (
            isinstance(block, TextContent)
            and block.text is text
            and block.annotations is None
            and block.meta is None
            and self.structured_content is structured
            and self.is_error is is_error
            and self.meta is meta
        ):
            return None
        wire: dict[str, Any] = {
            "_meta": meta,
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": is_error,
        }
        if self.result_type is not None:  # the 2026-07-28 era requires it; older ones drop it
            wire["resultType"] = self.result_type
        return wire


def text_result(
    text: str, structured: dict[str, Any], *, is_error: bool, meta: dict[str, Any]
) -> CallToolResult:
    """A tool result with one text block, structured content and `_meta`."""
    result = WireResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
        _meta=meta,
    )
    block = result.content[0]
    assert isinstance(block, TextContent) and result.structured_content is not None
    assert result.meta is not None
    parts: Parts = (block.text, result.structured_content, result.is_error, result.meta)
    object.__setattr__(result, "_wire_parts", parts)  # a slot (see WireResult): no pydantic hook
    return result
