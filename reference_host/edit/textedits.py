"""Applying a WorkspaceEdit's text edits to file bytes: LSP-style lines, UTF-16 code-unit columns.

Lines end at `\n`, `\r\n` or `\r`; a column counts UTF-16 code units (a character outside the
BMP counts two). Edits are applied from last to first and must not overlap; a range past the end
of a line or of the file, or content that is not UTF-8, is an error the caller refuses.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class TextEditError(ValueError):
    """The edits cannot be applied to this content as written."""


@dataclass(frozen=True)
class Edit:
    start: tuple[int, int]
    end: tuple[int, int]
    new_text: str


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


def _offset(text: str, starts: list[int], line: int, char: int) -> int:
    """The str index of (line, UTF-16 column); the end of the file is (last line, its length)."""
    if line >= len(starts):
        if line == len(starts) and char == 0 and text.endswith(("\n", "\r")):
            return len(text)
        raise TextEditError(f"line {line} is past the end of the content")
    begin = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content = _LINE_BREAK.sub("", text[begin:end])
    units = 0
    for index, ch in enumerate(content):
        if units == char:
            return begin + index
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > char:
            raise TextEditError(f"column {char} of line {line} splits a character")
    if units == char:
        return begin + len(content)
    raise TextEditError(f"column {char} is past the end of line {line}")


def apply_text_edits(data: bytes, edits: list[Edit]) -> bytes:
    """*data* with *edits* applied (all ranges refer to the original content)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TextEditError("content is not UTF-8; text edits need text") from exc
    starts = _line_starts(text)
    spans = []
    for edit in edits:
        begin = _offset(text, starts, *edit.start)
        end = _offset(text, starts, *edit.end)
        if end < begin:
            raise TextEditError("an edit range ends before it starts")
        spans.append((begin, end, edit.new_text))
    spans.sort(key=lambda s: (s[0], s[1]))
    for (_, end_a, _), (begin_b, _, _) in itertools.pairwise(spans):
        if begin_b < end_a:
            raise TextEditError("edit ranges overlap")
    for begin, end, new_text in reversed(spans):
        text = text[:begin] + new_text + text[end:]
    return text.encode("utf-8")
