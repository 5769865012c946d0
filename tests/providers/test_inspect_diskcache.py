"""The inspect provider's persistent facts cache (reference_host/providers/pyindex/diskcache.py):
entries round-trip exactly, anything unsound is a miss that is removed, and the cache stays within
its byte bound, dropping the least recently used entries and nothing but its own files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers.pyindex import diskcache
from reference_host.providers.pyindex.diskcache import FORMAT, FactCache, decode, encode
from reference_host.providers.pyindex.facts import ModuleFacts, parse_facts
from tests.support.inspect_sample import SAMPLE


def sample_facts() -> list:  # type: ignore[type-arg]
    return [
        parse_facts(blob_id(text.encode()), text.encode())
        for path, text in SAMPLE.items()
        if path.endswith(".py")
    ]


def test_entries_round_trip_exactly_and_are_found_after_a_new_instance(tmp_path: Path) -> None:
    facts = sample_facts()
    assert all(decode(f.blob, encode(f)) == f for f in facts)
    first = FactCache(tmp_path / "cache", "build-1")
    assert first.store_many(facts) == len(facts)
    assert first.store_many(facts) == 0  # already held
    again = FactCache(tmp_path / "cache", "build-1")  # a restarted provider
    held = again.load_many([f.blob for f in facts])
    assert held == {f.blob: f for f in facts}
    assert again.stats["hits"] == len(facts)
    other_build = FactCache(tmp_path / "cache", "build-2")
    assert other_build.load_many([f.blob for f in facts]) == {}  # another build never reads it


def test_entries_already_made_are_written_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = sample_facts()
    made = {f.blob: encode(f) for f in facts[1:]}  # as the parse workers send them
    encoded: list[str] = []

    def counted(item: ModuleFacts) -> bytes:
        encoded.append(item.blob)
        return encode(item)

    monkeypatch.setattr(diskcache, "encode", counted)
    cache = FactCache(tmp_path / "cache", "b")
    assert cache.store_many(facts, made) == len(facts)
    assert encoded == [facts[0].blob]  # only the one not already made
    assert all(cache.entry_path(b).read_bytes() == data for b, data in made.items())  # type: ignore[union-attr]
    assert FactCache(tmp_path / "cache", "b").load_many([f.blob for f in facts]) == {
        f.blob: f for f in facts
    }


def test_unsound_entries_are_misses_and_removed(tmp_path: Path) -> None:
    facts = sample_facts()
    cache = FactCache(tmp_path / "cache", "b")
    cache.store_many(facts)
    corrupt, swapped, truncated = facts[0], facts[1], facts[2]
    path_of = {f.blob: cache.entry_path(f.blob) for f in facts}
    data = bytearray(path_of[corrupt.blob].read_bytes())  # type: ignore[union-attr]
    data[-3] ^= 0xFF
    path_of[corrupt.blob].write_bytes(bytes(data))  # type: ignore[union-attr]
    # a sound entry of another blob under this blob's name: the id inside must match
    path_of[swapped.blob].write_bytes(encode(facts[3]))  # type: ignore[union-attr]
    path_of[truncated.blob].write_bytes(FORMAT + b"\x00")  # type: ignore[union-attr]
    held = cache.load_many([f.blob for f in facts])
    assert set(held) == {f.blob for f in facts[3:]}
    assert cache.stats["errors"] == 3
    assert not any(path_of[f.blob].exists() for f in (corrupt, swapped, truncated))  # type: ignore[union-attr]
    assert cache.load_many(["blob:git:1234", "blob:sha256:../../etc"]) == {}  # never a path


def test_the_cache_stays_within_its_bound_and_keeps_recent_and_foreign_files(
    tmp_path: Path,
) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    foreign = root / "notes.txt"
    foreign.write_text("the user's own file")
    modules = [f"def f_{n}(v):\n    return v + {n}\n" * 20 for n in range(40)]
    facts = [parse_facts(blob_id(m.encode()), m.encode()) for m in modules]
    size = len(encode(facts[0]))
    cache = FactCache(root, "b", max_bytes=size * 10)
    cache.store_many(facts[:5])
    left = cache.entry_path(facts[0].blob).parent / ".tmp-killed"  # type: ignore[union-attr]
    left.write_bytes(b"half an entry")
    os.utime(left, (1_000_000, 1_000_000))  # a killed provider's, long ago
    for n, item in enumerate(facts[:5]):  # the first five are old, in order ...
        os.utime(cache.entry_path(item.blob), (1_000_000 + n, 1_000_000 + n))
    cache.load_many([facts[0].blob])  # ... except one that was used again
    cache.store_many(facts[5:11])  # eleven entries: over the bound of ten
    held = set(cache.load_many([f.blob for f in facts[:11]]))
    assert facts[0].blob in held and facts[1].blob not in held  # least recently used went
    assert set(f.blob for f in facts[5:11]) <= held
    cache.store_many(facts[11:])
    assert sum(s for _, s, _ in cache.usage()) <= size * 10
    assert cache.stats["pruned"] >= 30
    assert foreign.read_text() == "the user's own file"
    assert not left.exists()
