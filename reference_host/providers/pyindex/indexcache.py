"""The resolved tables of a whole tree's index (linking.Links) as a persistent cache entry.

Resolving every use of a large tree is the costliest step of a provider restart after the parse
(about 2.7 CPU-s for Django's 2,800 modules), and its result depends only on the tree: the sorted
(path, blob id) pairs, whose digest names the entry, and the provider build, whose fingerprint
names the directory (see diskcache.py). An entry is checked like a facts entry (format line,
digest of the payload, the tree digest inside it); anything else is a miss and is removed, and the
index is then resolved again from the facts. Strings are stored once in a table and references as
columns of integers, so an entry is small and loading it shares every repeated id string.
"""

from __future__ import annotations

import logging
from array import array
from collections import defaultdict
from typing import Any

from reference_host.providers.pyindex.diskcache import FactCache, open_entry, seal
from reference_host.providers.pyindex.factmodel import shared_numbers
from reference_host.providers.pyindex.linking import Links, Ref

log = logging.getLogger("asp.python-inspect.cache")

FORMAT = b"asp-index/2\n"  # 2: names resolved through aliases
_SETS = ("deps", "rdeps", "module_rdeps", "type_rdeps")


def encode(key: str, links: Links) -> bytes:
    """The entry for the *links* of the tree whose digest is *key*."""
    table: dict[str, int] = {}

    def at(text: str) -> int:
        found = table.get(text)
        if found is None:
            found = table[text] = len(table)
        return found

    names, spans = array("i"), array("i")
    for ref in links.refs:
        names.extend((at(ref.source), at(ref.target), at(ref.kind), at(ref.path)))
        spans.extend(ref.span)
    return seal(
        FORMAT,
        key,
        (
            list(table),
            names.tobytes(),
            spans.tobytes(),
            [{k: sorted(v) for k, v in getattr(links, name).items()} for name in _SETS],
            links.unresolved,
            links.unresolved_at,
        ),
    )


def decode(key: str, data: bytes) -> Links | None:
    """The links of an entry, or None when it is not a sound entry of tree *key*."""
    return open_entry(FORMAT, key, data, _links)


def _links(
    strings: list[str],
    name_bytes: bytes,
    span_bytes: bytes,
    sets: list[dict[str, list[str]]],
    unresolved: Any,
    unresolved_at: Any,
) -> Links | None:
    """The links an entry's fields describe (None when its two columns disagree in length)."""
    names, spans = array("i"), array("i")
    names.frombytes(name_bytes)
    spans.frombytes(span_bytes)
    if len(names) != len(spans):
        return None
    links = Links(unresolved=unresolved, unresolved_at=unresolved_at)
    text, each, corner = strings.__getitem__, iter(names), shared_numbers(spans)
    links.refs = [
        Ref(text(source), text(target), text(kind), text(path), *span)
        for (source, target, kind, path), span in zip(
            zip(each, each, each, each, strict=True),
            zip(corner, corner, corner, corner, strict=True),
            strict=True,
        )
    ]
    refs_to, refs_from = links.refs_to, links.refs_from
    for ref in links.refs:
        refs_to[ref.target].append(ref)
        refs_from[ref.source].append(ref)
    for name, table in zip(_SETS, sets, strict=True):
        tables: defaultdict[str, set[str]] = getattr(links, name)
        for holder, members in table.items():
            tables[holder] = set(members)
    return links


def load_links(cache: FactCache, key: str) -> Links | None:
    """The cached links of tree *key*, or None (a miss; an unsound entry is removed)."""
    data = cache.read_index(key)
    if data is None:
        return None
    links = decode(key, data)
    if links is None:
        log.info("inspect cache: unsound index entry %s removed", key[:24])
        cache.stats["errors"] += 1
        cache.drop_index(key)
    return links


def store_links(cache: FactCache, key: str, links: Links) -> bool:
    """Keep the links of tree *key* for the next provider (written behind the first answer)."""
    return cache.write_index(key, encode(key, links))
