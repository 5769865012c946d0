"""A provider's stderr: drained into a bounded ring, shown only as a capped, fenced excerpt.

The provider wrote it, so it is untrusted text: the excerpt drops control and bidi characters,
removes any copy of the closing marker (the fence cannot be closed from inside) and is marked as
provider output. A crashed provider's status detail ends with it (`status/providers.py`).
"""

from __future__ import annotations

import re
from collections import deque

import anyio
from anyio.abc import ByteReceiveStream

STDERR_LIMIT = 64 * 1024
STDERR_EXCERPT_CHARS = 400
STDERR_FENCE_BEGIN = "[provider stderr, untrusted provider output, last lines]"
STDERR_FENCE_END = "[end of provider stderr]"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class StderrTail:
    """The last `STDERR_LIMIT` bytes a provider wrote to stderr."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0

    async def drain(self, stream: ByteReceiveStream | None) -> None:
        """Read *stream* to its end, keeping only the newest bytes."""
        if stream is None:
            return
        try:
            async for chunk in stream:
                self._chunks.append(chunk)
                self._size += len(chunk)
                while self._size > STDERR_LIMIT and self._chunks:
                    self._size -= len(self._chunks.popleft())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            return

    def excerpt(self, limit: int = STDERR_EXCERPT_CHARS) -> str:
        """The end of the text, capped at *limit* characters, cleaned and fenced ("" when empty)."""
        text = b"".join(self._chunks).decode("utf-8", "replace")
        text = _CONTROL.sub("", text).replace(STDERR_FENCE_END, "").strip()
        if not text:
            return ""
        if len(text) > limit:
            text = "…" + text[-limit:]
        return f"{STDERR_FENCE_BEGIN}\n{text}\n{STDERR_FENCE_END}"
