"""Byte-bounded pages of an inspect answer (the `offset` / `pageBytes` extension params).

A whole answer is computed once and kept (see `Answers`); each page takes its lists' items from
their offsets, in order, until the next item would push the page past `pageBytes`. Graph answers
say where they are in `data.page` (offsets, totals, the next offsets or null on the last page).
The impact envelope is closed, so an impact page only sets `truncated` when items remain; the
host, which asked with known offsets, turns the counts into its cursor.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from asp_protocol.framing import compact_json

DEFAULT_PAGE_BYTES = 256 * 1024
MIN_PAGE_BYTES = 4 * 1024
MAX_PAGE_BYTES = 8 * 1024 * 1024
GRAPH_LISTS = ("nodes", "edges")
IMPACT_LISTS = ("impactedNodes", "impactedFiles", "edges")
MAX_ANSWERS = 8
BLOB_ID_BYTES = 80  # `"blob:sha256:<64 hex>",`


def _size(value: Any) -> int:
    """Bytes of *value* as the wire carries it, by the function the host measures a page with
    (`framing.compact_json`, UTF-8): a page of non-ASCII text is cut by its bytes, not its
    characters. Raises `UnencodableMessage` for a value with no UTF-8 form (a lone surrogate)."""
    return len(compact_json(value))


# per list: each item's serialized size and the files it is drawn from
Measures = dict[str, list[tuple[int, frozenset[str]]]]


def measure(answer: dict[str, Any], lists: tuple[str, ...]) -> Measures:
    """Each list item's size and files, once per whole answer (a page then only adds them up);
    items drawn from one file share one set."""
    shared: dict[str, frozenset[str]] = {}
    return {
        name: [(_size(item), _files(item, shared)) for item in items]
        for name in lists
        if isinstance(items := answer.get(name, []), list)
    }


_NO_FILES: frozenset[str] = frozenset()


def _files(item: Any, shared: dict[str, frozenset[str]]) -> frozenset[str]:
    """What `item_paths` finds in one list item: its location's path, or itself when a path."""
    if isinstance(item, dict):
        location = item.get("location")
        path = location.get("path") if isinstance(location, dict) else None
    else:
        path = item
    if not isinstance(path, str):
        return _NO_FILES
    found = shared.get(path)
    if found is None:
        found = shared[path] = frozenset((path,))
    return found


def cut(
    answer: dict[str, Any],
    lists: tuple[str, ...],
    offset: dict[str, int],
    page_bytes: int,
    measures: Measures | None = None,
) -> tuple[dict[str, Any], dict[str, int] | None, set[str]]:
    """(the page of *answer* from *offset*, the next offsets or None when nothing remains, the
    files the page's list items are drawn from); *measures* are `measure(answer, lists)`."""
    sizes = measures if measures is not None else measure(answer, lists)
    page = {k: v for k, v in answer.items() if k not in lists}
    budget = page_bytes - _size(page) - 64
    following: dict[str, int] = {}
    remaining = False
    seen_paths: set[str] = set()
    for name in lists:
        items = answer.get(name, [])
        measured = sizes.get(name, [])
        start = min(max(0, offset.get(name, 0)), len(items))
        end = start
        for size, paths in measured[start:]:
            # a file not yet on the page also adds its blob id to `validAsOf.blobs`
            fresh = paths - seen_paths if paths else paths
            cost = size + 1 + BLOB_ID_BYTES * len(fresh)
            if cost > budget and (end > start or remaining or any(page.get(n) for n in lists)):
                break
            end += 1
            seen_paths |= fresh
            budget -= cost
        page[name] = items[start:end]
        following[name] = end
        remaining = remaining or end < len(items)
    return page, following if remaining else None, seen_paths


class Answers:
    """Whole answers by (tree, verb, params without paging) with their item measures, so a later
    page, or the same page asked again, costs no recomputation and no re-serializing."""

    def __init__(self) -> None:
        self._answers: OrderedDict[str, tuple[dict[str, Any], Measures]] = OrderedDict()

    def get(self, key: str) -> tuple[dict[str, Any], Measures] | None:
        found = self._answers.get(key)
        if found is not None:
            self._answers.move_to_end(key)
        return found

    def put(
        self, key: str, answer: dict[str, Any], lists: tuple[str, ...]
    ) -> tuple[dict[str, Any], Measures]:
        self._answers[key] = stored = (answer, measure(answer, lists))
        while len(self._answers) > MAX_ANSWERS:
            self._answers.popitem(last=False)
        return stored


def item_paths(page: dict[str, Any], lists: tuple[str, ...]) -> set[str]:
    """The files a page's items were drawn from (node and edge locations, impacted files)."""
    paths: set[str] = set()
    for name in (*lists, "changedNodes"):
        for item in page.get(name, []):
            if isinstance(item, str):
                paths.add(item)
            elif isinstance(item, dict):
                location = item.get("location")
                if isinstance(location, dict) and isinstance(location.get("path"), str):
                    paths.add(location["path"])
    return paths
