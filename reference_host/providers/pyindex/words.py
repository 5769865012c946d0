"""Which blobs of a tree may spell an identifier: the textual half of a query-scoped answer.

A use can only name a definition through identifiers written in its own file (scoped.py says why),
so while the whole index still builds, a query only needs the files whose text holds the names it
asks about. The test here may say yes for a file that does not use the name (a string, a comment,
a longer word next to a non-ASCII letter); it never says no for one that does. Python reads an
identifier in NFKC form (`ﬁle` is `file`) and in the file's declared encoding, so a non-ASCII blob
is searched as its decoded, NFKC-normalized text; one that cannot be decoded holds every name.
"""

from __future__ import annotations

import io
import mmap
import tokenize
import unicodedata
from collections.abc import Iterable, Iterator, Mapping

_EMPTY = mmap.mmap(-1, 1)  # the buffer of empty blobs (a map cannot be empty)
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _has_word(text: bytes | mmap.mmap, word: bytes, start: int = 0, end: int | None = None) -> bool:
    """*word* in `text[start:end]` with no ASCII identifier character right before or after it."""
    end = len(text) if end is None else end
    at = text.find(word, start, end)
    while at >= 0:
        after = at + len(word)
        if (at == start or text[at - 1] not in _WORD_BYTES) and (
            after >= end or text[after] not in _WORD_BYTES
        ):
            return True
        at = text.find(word, at + 1, end)
    return False


class Packed(Mapping[str, bytes]):
    """Blobs' bytes kept packed, one anonymous memory map per batch read: a build keeps every
    blob it read until it ends (for early answers), and a map is given back to the system whole
    when freed, where thousands of separate blobs freed at the end of a build would leave holes
    in the heap among the long-lived facts allocated meanwhile."""

    def __init__(self) -> None:
        self._at: dict[str, tuple[mmap.mmap, int, int]] = {}

    def add(self, served: Mapping[str, bytes]) -> None:
        size = sum(len(data) for data in served.values())
        if not size:
            for blob in served:
                self._at[blob] = (_EMPTY, 0, 0)
            return
        buffer, offset = mmap.mmap(-1, size), 0
        for blob, data in served.items():
            buffer.write(data)
            self._at[blob] = (buffer, offset, offset + len(data))
            offset += len(data)

    def span(self, blob: str) -> tuple[mmap.mmap, int, int]:
        """(buffer, start, end) of a blob's bytes."""
        return self._at[blob]

    def __getitem__(self, blob: str) -> bytes:
        buffer, start, end = self._at[blob]
        return buffer[start:end]

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


def searchable(data: bytes) -> bytes | None:
    """The bytes to search for identifiers in a blob; None when it cannot be decoded (then it
    must count as holding every name)."""
    if data.isascii():
        return data
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text.encode("utf-8", "surrogatepass")


class Texts:
    """The bytes of a tree's blobs (every one read by the build), searched by word."""

    def __init__(self, data: Packed) -> None:
        self.data = data
        self._forms: dict[str, bytes | None] = {}  # non-ASCII blobs: their searchable form

    def holds(self, blob: str, word: str) -> bool:
        encoded = word.encode("utf-8", "surrogatepass")
        if blob in self._forms:
            form = self._forms[blob]
            return form is None or _has_word(form, encoded)
        buffer, start, end = self.data.span(blob)
        if not buffer[start:end].isascii():
            self._forms[blob] = searchable(buffer[start:end])
            return self.holds(blob, word)
        return _has_word(buffer, encoded, start, end)

    def size(self, blob: str) -> int:
        _buffer, start, end = self.data.span(blob)
        return end - start

    def files_with(self, tree: Mapping[str, str], words: Iterable[str]) -> set[str]:
        """The paths of *tree* whose blob may spell one of *words*."""
        wanted = list(words)
        return {path for path, blob in tree.items() if any(self.holds(blob, w) for w in wanted)}
