"""Byte-bounded pages of an inspect answer (the `offset` / `pageBytes` extension params).

A whole answer is computed once and kept (see `Answers`); each page takes its lists' items from
their offsets, in order, until the next item would push the page past `pageBytes`. Graph answers
say where they are in `data.page` (offsets, totals, the next offsets or null on the last page).
The impact envelope is closed, so an impact page only sets `truncated` when items remain; the
host, which asked with known offsets, turns the counts into its cursor.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

DEFAULT_PAGE_BYTES = 256 * 1024
MIN_PAGE_BYTES = 4 * 1024
MAX_PAGE_BYTES = 8 * 1024 * 1024
GRAPH_LISTS = ("nodes", "edges")
IMPACT_LISTS = ("impactedNodes", "impactedFiles", "edges")
MAX_ANSWERS = 8
BLOB_ID_BYTES = 80  # `"blob:sha256:<64 hex>",`


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def cut(
    answer: dict[str, Any], lists: tuple[str, ...], offset: dict[str, int], page_bytes: int
) -> tuple[dict[str, Any], dict[str, int] | None]:
    """(the page of *answer* from *offset*, the next offsets or None when nothing remains)."""
    page = {k: v for k, v in answer.items() if k not in lists}
    budget = page_bytes - _size(page) - 64
    following: dict[str, int] = {}
    remaining = False
    seen_paths: set[str] = set()
    for name in lists:
        items = answer.get(name, [])
        start = min(max(0, offset.get(name, 0)), len(items))
        taken: list[Any] = []
        for item in items[start:]:
            # a file not yet on the page also adds its blob id to `validAsOf.blobs`
            fresh = item_paths({name: [item]}, (name,)) - seen_paths
            size = _size(item) + 1 + BLOB_ID_BYTES * len(fresh)
            if size > budget and (taken or remaining or any(page.get(n) for n in lists)):
                break
            taken.append(item)
            seen_paths |= fresh
            budget -= size
        page[name] = taken
        following[name] = start + len(taken)
        remaining = remaining or following[name] < len(items)
    return page, following if remaining else None


class Answers:
    """Whole answers by (tree, verb, params without paging), so page two costs no recomputation."""

    def __init__(self) -> None:
        self._answers: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def get(self, key: str) -> dict[str, Any] | None:
        found = self._answers.get(key)
        if found is not None:
            self._answers.move_to_end(key)
        return found

    def put(self, key: str, answer: dict[str, Any]) -> None:
        self._answers[key] = answer
        while len(self._answers) > MAX_ANSWERS:
            self._answers.popitem(last=False)


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
