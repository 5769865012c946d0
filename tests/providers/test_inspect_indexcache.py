"""The resolved index of a tree kept in the persistent cache (reference_host/providers/pyindex/
indexcache.py): an entry round-trips to the same tables and answers, only the same tree finds it,
anything unsound is a miss that is removed, and index entries count toward the cache's bound."""

from __future__ import annotations

from pathlib import Path

from reference_host.providers.pyindex import InspectEngine, queries
from reference_host.providers.pyindex.diskcache import FactCache
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.indexcache import (
    FORMAT,
    decode,
    encode,
    load_links,
    store_links,
)
from reference_host.providers.pyindex.linking import Links
from tests.support.inspect_sample import ROUND_CENTS, SAMPLE

GLOBS = "index-*/*.index"


def sample_index() -> tuple[InspectEngine, dict[str, str], PythonIndex]:
    engine = InspectEngine()
    index = engine.index_sources({p: t.encode() for p, t in SAMPLE.items()})
    tree = {path: entry.blob for path, entry in index.files.items()}
    return engine, tree, index


def tables(links: Links) -> tuple[object, ...]:
    return (
        links.refs,
        dict(links.refs_to),
        dict(links.refs_from),
        *(dict(getattr(links, n)) for n in ("deps", "rdeps", "module_rdeps", "type_rdeps")),
        links.unresolved,
        links.unresolved_at,
    )


def test_an_entry_round_trips_to_the_same_tables_and_answers(tmp_path: Path) -> None:
    engine, tree, index = sample_index()
    key = engine.tree_key(tree)
    assert index.links.refs  # the sample has references to keep
    decoded = decode(key, encode(key, index.links))
    assert decoded is not None and tables(decoded) == tables(index.links)

    cache = FactCache(tmp_path / "cache", "build-1")
    assert store_links(cache, key, index.links)
    fresh = InspectEngine()  # a restarted provider: facts parsed again, the index read back
    for path, text in SAMPLE.items():
        if path in tree:
            fresh.add_blob(tree[path], text.encode())
    loaded = fresh.index(tree, lambda k: load_links(FactCache(tmp_path / "cache", "build-1"), k))
    assert fresh.stats["indexLoads"] == 1 and fresh.stats["indexBuilds"] == 0
    for walk in (queries.callers, queries.callees):
        assert walk(loaded, {"id": ROUND_CENTS}, 2, 100) == walk(index, {"id": ROUND_CENTS}, 2, 100)
    assert queries.references(loaded, {"id": ROUND_CENTS}, None, 100) == queries.references(
        index, {"id": ROUND_CENTS}, None, 100
    )
    assert load_links(FactCache(tmp_path / "cache", "build-2"), key) is None  # another build


def test_another_tree_misses_and_unsound_entries_are_removed(tmp_path: Path) -> None:
    engine, tree, index = sample_index()
    key = engine.tree_key(tree)
    cache = FactCache(tmp_path / "cache", "b")
    store_links(cache, key, index.links)
    changed = dict(tree)
    changed["src/shop/money.py"] = "blob:sha256:" + "0" * 64  # one blob differs: another tree
    assert load_links(cache, engine.tree_key(changed)) is None
    assert load_links(cache, "sha256:../../etc") is None  # never a path
    entry = cache.index_path(key)
    assert entry is not None and entry.exists()
    data = bytearray(entry.read_bytes())
    data[-2] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert load_links(cache, key) is None and not entry.exists()  # corrupt: removed
    other = engine.tree_key(changed)
    entry.write_bytes(encode(other, index.links))  # sound, but another tree's entry
    assert load_links(cache, key) is None and not entry.exists()
    entry.write_bytes(FORMAT + b"\x01")
    assert load_links(cache, key) is None and cache.stats["errors"] == 3


def test_index_entries_count_toward_the_bound(tmp_path: Path) -> None:
    engine, tree, index = sample_index()
    size = len(encode(engine.tree_key(tree), index.links))
    cache = FactCache(tmp_path / "cache", "b", max_bytes=size * 3)
    keys = [f"sha256:{n:064x}" for n in range(6)]
    for key in keys:
        assert store_links(cache, key, index.links)
    held = [k for k in keys if cache.index_path(k).exists()]  # type: ignore[union-attr]
    assert 0 < len(held) <= 3 and keys[-1] in held  # the oldest went, the newest stayed
    assert sum(s for _, s, _ in cache.usage()) <= size * 3
    assert len(list((tmp_path / "cache").glob(GLOBS))) == len(held)
