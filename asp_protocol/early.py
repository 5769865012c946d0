"""What the endpoint does with a chunk in the pipe's read callback, before its read loop runs.

The read loop (`JsonRpcEndpoint.serve`) is a task the pipe's read callback wakes: it runs one
loop turn later. When the chunk is one whole line and nothing read before is unprocessed, two
kinds of line are acted on in the callback itself (`EarlyLines.take`):

- a reply to one of the endpoint's own requests is settled there (replies.py), and the read loop
  never sees it;
- a request is decoded there, and when its method has a `prepare` step (handling.py) that step
  runs there too — the host's status starts `git status` one loop turn sooner. The line still
  goes to the read loop, in order, which takes the decoded message and the prepared value
  (`claim`) instead of decoding and preparing again; a value the read loop never claimed (the
  endpoint stopped first) is closed by `close_all`.

Everything else (notifications, bad lines, a request whose id is refused) is left to the read
loop as it comes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from asp_protocol.errors import AspError
from asp_protocol.framing import LineReader
from asp_protocol.handling import prepared_input
from asp_protocol.replies import is_reply, lone_message
from asp_protocol.rpc_types import Inflight, Pending, Prepared, Registration, is_request_id

log = logging.getLogger("asp_protocol.jsonrpc")

#: Request lines up to this size are decoded (and prepared) in the read callback; a longer one
#: (an uploaded blob, say) is left to the read loop, which then decodes it once, as before.
EARLY_REQUEST_BYTES = 16 * 1024


@dataclass
class Early:
    """A request line decoded in the read callback, and its prepared input when it has one."""

    message: dict[str, Any]
    size: int
    prepared: bool = False
    params: Any = None
    refused: AspError | None = None


class EarlyLines:
    """The read-callback side of one endpoint (see the module docstring)."""

    def __init__(
        self,
        name: str,
        reader: LineReader,
        pending: dict[Any, Pending],
        inflight: dict[Any, Inflight],
        handlers: dict[str, Registration],
        on_response: Callable[[dict[str, Any], int], None],
    ) -> None:
        self._name, self._reader = name, reader
        self._pending, self._inflight, self._handlers = pending, inflight, handlers
        self._on_response = on_response
        self._lines: dict[bytes, Early] = {}  # keyed by the line without its newline
        self.prepares = False  # a method with a prepare step is registered

    def take(self, chunk: bytes) -> bool:
        """True when the chunk was a reply, settled here; False leaves it to the read loop."""
        if not self._reader.idle:
            return False
        small = len(chunk) <= EARLY_REQUEST_BYTES
        if not self._pending and not (self.prepares and small):
            return False  # nothing to gain here: no decoding twice
        found = lone_message(chunk, self._reader.max_line_bytes)
        if found is None:
            return False
        message, size = found
        try:
            if "method" in message:
                if small:  # a large line is kept (and looked up) by its bytes: not worth it
                    self._request(chunk[:-1], message, size)
                return False
            if self._pending and is_reply(message):
                self._on_response(message, size)
                return True
        except Exception:  # a read callback must not raise; the read loop meets the line again
            log.exception("%s: a line handled in the read callback failed", self._name)
        return False

    def _request(self, line: bytes, message: dict[str, Any], size: int) -> None:
        method, request_id = message["method"], message.get("id")
        if not isinstance(method, str) or not is_request_id(request_id) or line in self._lines:
            return
        early = Early(message, size)
        registration = self._handlers.get(method)
        prepare = registration.prepare if registration is not None else None
        if prepare is not None and request_id not in self._inflight:  # (else a duplicate id)
            early.prepared = True
            early.params, early.refused = prepared_input(
                self._name, method, prepare, message.get("params")
            )
        self._lines[line] = early

    def claim(self, line: bytes) -> Early | None:
        """The read loop's line decoded (and prepared) here, if it was."""
        return self._lines.pop(line, None) if self._lines else None

    def close_unused(self, early: Early | None) -> None:
        """Close what was prepared for a line its request did not take (refused as it was read)."""
        if early is not None and early.prepared and early.params is not None:
            early.prepared = False
            _close(early.params)

    def close_all(self) -> None:
        """Close every prepared input no request took (the endpoint stopped first)."""
        lines, self._lines = self._lines, {}
        for early in lines.values():
            if early.prepared and early.params is not None:
                _close(early.params)


def _close(prepared: Prepared) -> None:
    try:
        prepared.close()
    except Exception:
        log.exception("closing an unclaimed prepared input failed")
