"""A finished build's persistent-cache write (reference_host/providers/pyindex/build.py,
`write_behind`): the entries and the resolved index are written by a forked child, so this
process never runs the encoding (whose garbage stayed resident after a build); when the child
fails this process writes them itself; either way the build gives up what it kept for the write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from reference_host.providers.pyindex import InspectEngine, build
from reference_host.providers.pyindex.build import Build, CacheWrite, write_behind
from reference_host.providers.pyindex.diskcache import FactCache, encode
from reference_host.providers.pyindex.indexcache import load_links
from tests.support.inspect_sample import SAMPLE


def finished_build() -> tuple[Build, dict[str, str], str]:
    """A build as `Builds._run` leaves it: facts it parsed (entries made by "workers" for all
    but one), its resolved index, the tree's key."""
    engine = InspectEngine()
    index = engine.index_sources({p: t.encode() for p, t in SAMPLE.items()})
    tree = {path: entry.blob for path, entry in index.files.items()}
    done = Build(tree, False)
    done.fresh = [entry.facts for entry in index.files.values()]
    done.encoded = {f.blob: encode(f) for f in done.fresh[1:]}
    key = engine.tree_key(tree)
    done.fresh_links = (key, index.links)
    return done, tree, key


def recording(monkeypatch: pytest.MonkeyPatch, cache: FactCache) -> list[int]:
    """The pids that ran `store_many` as seen from this process."""
    calls: list[int] = []
    store = cache.store_many

    def recorded(*args: Any, **kwargs: Any) -> int:
        calls.append(os.getpid())
        return store(*args, **kwargs)

    monkeypatch.setattr(cache, "store_many", recorded)
    return calls


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the write runs in a forked child")
@pytest.mark.parametrize("child_fails", [False, True])
def test_a_child_writes_the_cache_or_this_process_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child_fails: bool
) -> None:
    done, _tree, key = finished_build()
    facts = list(done.fresh)
    cache = FactCache(tmp_path / "cache", "b")
    calls = recording(monkeypatch, cache)
    if child_fails:  # it died, was killed after its grace, or could not be forked
        monkeypatch.setattr(build, "in_child", lambda run, grace_s: None)
    job = CacheWrite(done)
    assert (done.fresh, done.encoded, done.fresh_links) == ([], {}, None)  # taken from the build
    write_behind(cache, job)
    # without a failure, written by the child in its own copy: this process encoded nothing
    assert calls == ([os.getpid()] if child_fails else [])
    again = FactCache(tmp_path / "cache", "b")  # a restarted provider finds everything
    assert again.load_many([f.blob for f in facts]) == {f.blob: f for f in facts}
    assert load_links(again, key) is not None
    assert (job.fresh, job.encoded, job.links) == ([], {}, None)  # freed here once written


def test_nothing_new_forks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    forks: list[object] = []
    monkeypatch.setattr(build, "in_child", lambda run, grace_s: forks.append(run))
    write_behind(FactCache(tmp_path / "cache", "b"), CacheWrite(Build({}, False)))
    assert forks == []  # a restart that read everything back has nothing to write
