"""Compact text for `asp_inspect`: one line per node or edge (kind, name, `path:line`), and pages.

Everything here reads an untrusted host result: values are type-checked, control characters and
line breaks removed and each string capped, so one host string can neither break the one-line
layout nor blow the page size. Lines are 1-based (graph positions on the wire are 0-based).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bridge.fence import cap_string, clean_text

FIELD_CHARS = 200
CURSOR_VERSION = 1
MAX_CURSOR_CHARS = 2000
# a host cursor is opaque to the bridge: carried only when it looks like the host's (url-safe
# base64 of a small object) and is short enough to fit inside the bridge's own cursor
HOST_CURSOR = re.compile(r"^[A-Za-z0-9_=-]{1,1000}$")


def text_of(value: Any, limit: int = FIELD_CHARS) -> str:
    """A host string as one capped line; anything else as `?`."""
    if not isinstance(value, str):
        return "?"
    if (  # the usual name or path: already one clean line with single spaces, under the limit
        0 < len(value) <= limit
        and value.isprintable()
        and value[0] != " "
        and value[-1] != " "
        and "  " not in value
    ):
        return value
    flat = " ".join(clean_text(value).split())
    return cap_string(flat, limit) if flat else "''"


def where(location: Any) -> str | None:
    """`path:line` (1-based) of a graph location, `path` without a range, None without a path."""
    if not isinstance(location, dict) or not isinstance(location.get("path"), str):
        return None
    path = text_of(location["path"])
    start = _obj(location.get("range")).get("start")
    line = start.get("line") if isinstance(start, dict) else None
    if isinstance(line, int) and not isinstance(line, bool) and line >= 0:
        return f"{path}:{line + 1}"
    return path


def node_line(node: Any) -> str:
    """`kind name path:line [id=...] [test]`; the id only when it adds more than path and name."""
    if not isinstance(node, dict):
        return "(unreadable node)"
    kind, name = text_of(node.get("kind"), 40), text_of(node.get("name"))
    location = where(node.get("location")) or "(no location)"
    parts = [kind, name, location]
    raw_id, raw_path = node.get("id"), _obj(node.get("location")).get("path")
    if isinstance(raw_id, str) and raw_id not in (raw_path, f"{raw_path}::{node.get('name')}"):
        parts.append(f"id={text_of(raw_id)}")
    if node.get("test") is True and node.get("kind") != "test":
        parts.append("[test]")
    return " ".join(parts)


def edge_line(edge: Any) -> str:
    """`kind from -> to path:line` (the location when the edge has one)."""
    if not isinstance(edge, dict):
        return "(unreadable edge)"
    line = (
        f"{text_of(edge.get('kind'), 40)} {text_of(edge.get('from'))} -> {text_of(edge.get('to'))}"
    )
    location = where(edge.get("location"))
    return f"{line} {location}" if location else line


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def provider_results(host_result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(provider id, graph result) pairs of `data.results`, skipping malformed entries."""
    data = host_result.get("data")
    out: list[tuple[str, dict[str, Any]]] = []
    for entry in _list(data.get("results") if isinstance(data, dict) else None):
        if isinstance(entry, dict) and isinstance(entry.get("result"), dict):
            out.append((text_of(entry.get("provider"), 80), entry["result"]))
    return out


class ItemLines:
    """Every node and edge of the host's answer as one line each, in answer order (changed nodes
    first for impact), with a `[provider]` prefix when more than one provider answered.

    A line is rendered when it is first read: a page shows a few hundred lines of an answer that
    may hold thousands, and rendering every line was most of an inspect call's CPU in the bridge.
    """

    def __init__(self, items: list[tuple[str, Callable[[Any], str], Any]]) -> None:
        self._items = items
        self._rendered: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int) -> str:
        line = self._rendered.get(index)
        if line is None:
            prefix, render, item = self._items[index]
            line = self._rendered[index] = prefix + render(item)
        return line

    def __iter__(self) -> Iterator[str]:
        return (self[index] for index in range(len(self._items)))

    @property
    def rendered(self) -> int:
        """How many lines have been rendered so far."""
        return len(self._rendered)


def _changed_line(node: Any) -> str:
    return "changed " + node_line(node)


def item_lines(host_result: dict[str, Any], verb: str) -> ItemLines:
    """The lines of every node and edge of *host_result* (see `ItemLines`)."""
    results = provider_results(host_result)
    items: list[tuple[str, Callable[[Any], str], Any]] = []
    for provider, graph in results:
        prefix = f"[{provider}] " if len(results) > 1 else ""
        data = _obj(graph.get("data"))
        if verb == "impact":
            items.extend((prefix, _changed_line, n) for n in _list(data.get("changedNodes")))
        items.extend((prefix, node_line, n) for n in _list(graph.get("nodes")))
        items.extend((prefix, edge_line, e) for e in _list(graph.get("edges")))
    return ItemLines(items)


def impact_counts(host_result: dict[str, Any]) -> tuple[int, int]:
    """(impacted files, impacted test files) over every provider's impact answer.

    A file counts when the answer lists it in `impactedFiles` or one of its nodes lies in it: a
    paged answer fills a page with nodes first and `impactedFiles` with what room is left (on
    Django, 422 nodes but 2 files on the first page), so the list alone undercounts."""
    files: set[str] = set()
    tests: set[str] = set()
    for _, graph in provider_results(host_result):
        data = _obj(graph.get("data"))
        files.update(f for f in _list(data.get("impactedFiles")) if isinstance(f, str))
        for node in _list(graph.get("nodes")):
            path = _obj(_obj(node).get("location")).get("path")
            if isinstance(path, str):
                files.add(path)
                if _obj(node).get("test") is True:
                    tests.add(path)
    return len(files), len(tests)


def provider_truncated(host_result: dict[str, Any]) -> bool:
    return any(
        isinstance(graph.get("data"), dict) and graph["data"].get("truncated") is True
        for _, graph in provider_results(host_result)
    )


@dataclass(frozen=True)
class Page:
    """The slice of item lines shown, and where the next page starts (None on the last page)."""

    start: int
    lines: list[str]
    total: int

    @property
    def next_offset(self) -> int | None:
        end = self.start + len(self.lines)
        return end if end < self.total else None


def take_page(lines: ItemLines, start: int, budget: int) -> Page:
    """As many lines from *start* as fit in *budget* characters (newlines counted); at least one."""
    chosen: list[str] = []
    used = 0
    for index in range(start, len(lines)):
        line = lines[index]
        cost = len(line) + 1
        if chosen and used + cost > budget:
            break
        chosen.append(line)
        used += cost
    return Page(start, chosen, len(lines))


@dataclass(frozen=True)
class Cursor:
    """Where the next page starts, for which query, as of which host baseline: `offset` is a line
    of the host page that `host` (the host's own cursor, None for its first page) asks for."""

    offset: int
    query: str
    baseline: dict[str, str]
    host: str | None = None


class CursorError(ValueError):
    """A cursor this tool did not issue, or one that was altered."""


def encode_cursor(cursor: Cursor) -> str:
    raw: dict[str, Any] = {
        "v": CURSOR_VERSION,
        "o": cursor.offset,
        "q": cursor.query,
        "b": cursor.baseline,
    }
    if cursor.host is not None:
        raw["h"] = cursor.host
    text = json.dumps(raw, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return base64.urlsafe_b64encode(text).decode("ascii").rstrip("=")


def decode_cursor(value: str) -> Cursor:
    if len(value) > MAX_CURSOR_CHARS:
        raise CursorError("cursor is too long")
    try:
        raw = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise CursorError("cursor is not one asp_inspect issued") from None
    if not isinstance(raw, dict) or raw.get("v") != CURSOR_VERSION:
        raise CursorError("cursor is not one asp_inspect issued")
    offset, query, baseline, host = raw.get("o"), raw.get("q"), raw.get("b"), raw.get("h")
    if set(raw) - {"v", "o", "q", "b", "h"} or (
        host is not None and not (isinstance(host, str) and HOST_CURSOR.fullmatch(host))
    ):
        raise CursorError("cursor is malformed")
    if (
        not isinstance(offset, int)
        or isinstance(offset, bool)
        or offset < 0
        or not isinstance(query, str)
        or not isinstance(baseline, dict)
        or not isinstance(baseline.get("rev"), str)
        or set(baseline) - {"rev", "dirty"}
        or not all(isinstance(v, str) and len(v) <= 300 for v in baseline.values())
    ):
        raise CursorError("cursor is malformed")
    return Cursor(offset, query, dict(baseline), host)


@dataclass(frozen=True)
class HostPage:
    """Where this answer sits in the host's own pages (`data.page` of its provider results)."""

    paged: bool  # the host said how it paged (a `data.page` object)
    next_cursor: str | None  # the host's cursor of its next page, when it is one we can carry
    unusable_cursor: bool  # the host has a next page but its cursor cannot be carried
    page_bytes: int | None
    total: dict[str, int]  # the host's counts of the whole answer's lists, summed over results


def host_page(host_result: dict[str, Any]) -> HostPage:
    """The host's paging of *host_result*: its first next-page cursor and its whole-answer counts."""
    paged, cursor, unusable, size = False, None, False, None
    total: dict[str, int] = {}
    for _, graph in provider_results(host_result):
        page = _obj(_obj(graph.get("data")).get("page"))
        if not page:
            continue
        paged = True
        if isinstance(page.get("pageBytes"), int) and not isinstance(page["pageBytes"], bool):
            size = page["pageBytes"]
        for name, count in _obj(page.get("total")).items():
            if isinstance(name, str) and isinstance(count, int) and not isinstance(count, bool):
                key = text_of(name, 40)
                total[key] = total.get(key, 0) + count
        value = page.get("cursor")
        if value is None:
            continue
        if cursor is None and isinstance(value, str) and HOST_CURSOR.fullmatch(value):
            cursor = value
        elif cursor != value:
            unusable = True
    return HostPage(paged, cursor, unusable, size, total)


def _graph_lists(graph: dict[str, Any], verb: str) -> list[tuple[str | None, str]]:
    """Where a provider graph keeps its items, in `item_lines` order: (holder key, list key)."""
    lists: list[tuple[str | None, str]] = [("data", "changedNodes")] if verb == "impact" else []
    return [*lists, (None, "nodes"), (None, "edges")]


def page_of(host_result: dict[str, Any], verb: str, start: int, count: int) -> dict[str, Any]:
    """The host result with only the items of one page — the same items, in the same order, as
    `item_lines(...)[start:start + count]`; every other field is kept."""
    data = host_result.get("data")
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        return host_result
    end, seen = start + count, 0
    paged: list[Any] = []
    for entry in results:
        if not (isinstance(entry, dict) and isinstance(entry.get("result"), dict)):
            paged.append(entry)
            continue
        graph = dict(entry["result"])
        for holder, key in _graph_lists(graph, verb):
            owner = graph if holder is None else _obj(graph.get(holder))
            items = _list(owner.get(key))
            if not items:
                continue
            kept = items[max(start - seen, 0) : max(end - seen, 0)]
            seen += len(items)
            if holder is None:
                graph[key] = kept
            else:
                graph[holder] = {**owner, key: kept}
        paged.append({**entry, "result": graph})
    return {**host_result, "data": {**data, "results": paged}}  # type: ignore[dict-item]
