"""Linking a file (pyindex/linking.py) resolves a chain once per scope and reuses that for the uses
that repeat it: every use still gets its own reference, its own `C.member` edge to the class and
its own unresolved count, exactly as resolving each use again records."""

from __future__ import annotations

from collections import Counter

import pytest

from reference_host.providers.pyindex import InspectEngine, PythonIndex
from reference_host.providers.pyindex import index as index_module
from reference_host.providers.pyindex.index import FileEntry
from reference_host.providers.pyindex.linking import link_file

SOURCES = {
    "pkg/__init__.py": b"from pkg.core import Store, make\n",
    "pkg/core.py": b"""
class Store:
    def load(self):
        return 1

    @classmethod
    def open(cls):
        return cls()


def make():
    return Store()
""",
    "pkg/use.py": b"""
from pkg import Store, make
import pkg.core as core


class Cache:
    def __init__(self):
        self.store = Store()

    def fill(self, other):
        self.store.load()
        self.store.load()
        Store.open().load()
        Store.open().load()
        other.reload()
        other.reload()
        core.make()
        core.make()
        return make(), make(), self.store.missing, self.store.missing


def again():
    Store.open()
    core.make()
    return make().load()
""",
}


def _linked(resolve_each: bool, monkeypatch: pytest.MonkeyPatch) -> PythonIndex:
    """The index of SOURCES; with *resolve_each*, every use is resolved again (no reuse)."""
    if resolve_each:
        calls: Counter[tuple[str, int, tuple[str, ...]]] = Counter()
        original = PythonIndex.resolve_chain

        def counted(self: PythonIndex, path: str, scope: int, chain: tuple[str, ...], *rest):  # type: ignore[no-untyped-def]
            if rest[1:2] and rest[1] is not None:  # from link_file (not a nested resolution)
                calls[path, scope, chain] += 1
            return original(self, path, scope, chain, *rest)

        monkeypatch.setattr(PythonIndex, "resolve_chain", counted)
        built = InspectEngine().index_sources(SOURCES)
        assert calls and max(calls.values()) == 1  # each chain once per scope and file
        return built
    return InspectEngine().index_sources(SOURCES)


def test_repeated_uses_each_keep_their_reference_and_their_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = _linked(True, monkeypatch)
    in_use = [ref for ref in index.links.refs if ref.path == "pkg/use.py"]

    def lines(target: str, kind: str) -> list[int]:
        return [ref.line for ref in in_use if ref.target == target and ref.kind == kind]

    assert lines("pkg/core.py::Store.load", "calls") == [10, 11]  # `self.store.load()` twice
    assert lines("pkg/core.py::Store.open", "calls") == [12, 13, 22]
    assert lines("pkg/core.py::Store", "depends-on") == [12, 13, 22]  # `Store.open`: Store too
    assert lines("pkg/core.py::make", "calls") == [16, 17, 18, 18, 23, 24]
    # `Store.open().load()` and `make().load()` (no return annotation): three unresolved calls
    assert index.unresolved["load"] == [3, 3]
    assert index.unresolved["reload"] == [2, 2]
    assert index.unresolved["missing"] == [2, 0]


def test_the_tables_are_those_of_resolving_every_use_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reused = _linked(False, monkeypatch)

    def link_each(
        index: PythonIndex, entries: list[FileEntry], cores: int = 1, graph: object = None
    ) -> None:
        for entry in entries:
            link_file(index, entry, reuse=False)

    monkeypatch.setattr(index_module, "link_files", link_each)
    again = InspectEngine().index_sources(SOURCES)
    assert len(again.links.refs) > 20
    assert again.links.refs == reused.links.refs
    assert again.links.unresolved == reused.links.unresolved
    assert again.links.unresolved_at == reused.links.unresolved_at
    assert again.links.deps == reused.links.deps
