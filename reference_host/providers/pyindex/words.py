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
import tokenize
import unicodedata
from collections.abc import Iterable, Mapping

_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _has_word(text: bytes, word: bytes) -> bool:
    """*word* in *text* with no ASCII identifier character right before or after it."""
    at = text.find(word)
    end = len(text)
    while at >= 0:
        after = at + len(word)
        if (at == 0 or text[at - 1] not in _WORD_BYTES) and (
            after >= end or text[after] not in _WORD_BYTES
        ):
            return True
        at = text.find(word, at + 1)
    return False


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

    def __init__(self, data: Mapping[str, bytes]) -> None:
        self.data = data
        self._forms: dict[str, bytes | None] = {}

    def holds(self, blob: str, word: str) -> bool:
        if blob not in self._forms:
            self._forms[blob] = searchable(self.data[blob])
        form = self._forms[blob]
        return form is None or _has_word(form, word.encode("utf-8", "surrogatepass"))

    def size(self, blob: str) -> int:
        return len(self.data[blob])

    def files_with(self, tree: Mapping[str, str], words: Iterable[str]) -> set[str]:
        """The paths of *tree* whose blob may spell one of *words*."""
        wanted = list(words)
        return {path for path, blob in tree.items() if any(self.holds(blob, w) for w in wanted)}
