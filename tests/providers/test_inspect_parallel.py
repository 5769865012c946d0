"""A first build on two cores gives exactly what one core gives: facts parsed in worker processes
(sent back as marshalled entries, reference_host/providers/pyindex/reading.py) and uses resolved
half in a forked child (forklink.py), including when that child fails."""

from __future__ import annotations

import os
import signal

import anyio
import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from reference_host.providers.pyindex import InspectEngine, forklink, reading
from reference_host.providers.pyindex.diskcache import decode, encode
from reference_host.providers.pyindex.facts import ModuleFacts, parse_facts
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.linking import Links
from reference_host.providers.pyindex.reading import MIN_POOL_BLOBS, read_facts
from tests.support.inspect_sample import SAMPLE


def generated_tree(count: int) -> dict[str, bytes]:
    """The sample package plus *count* modules that import, subclass, star-import and call
    each other (and names nothing resolves), so both halves of a split need the other's facts."""
    sources = {p: t.encode() for p, t in SAMPLE.items() if p.endswith(".py")}
    for n in range(count):
        before = max(n - 1, 0)
        sources[f"src/gen/m{n}.py"] = (
            "from typing import TYPE_CHECKING\n"
            f"from gen.m{before} import Base{before} as Parent\n"
            f"from gen import m{(n * 7) % count} as other\n"
            f"from .m{(n * 3) % count} import *\n"
            "if TYPE_CHECKING:\n"
            f"    from gen.m{(n + 1) % count} import Base{(n + 1) % count}\n"
            "counter = 0\n\n\n"
            f"class Base{n}(Parent):\n"
            "    def __init__(self):\n"
            "        self.helper = Parent()\n\n"
            f"    def run{n}(self, item):\n"
            "        global counter\n"
            "        counter += 1\n"
            "        self.helper.run0(item)\n"
            "        item.unknown_method()\n"
            f"        return other.Base{(n * 7) % count}().run{(n * 7) % count}(item)\n\n\n"
            f"def make{n}():\n"
            f"    with Base{n}() as made:\n"
            f"        made.run{n}(None)\n"
            f"    return [Base{n}() for _ in range(3)]\n"
        ).encode()
    sources["src/gen/__init__.py"] = b""
    return sources


def tables(links: Links) -> tuple[object, ...]:
    return (
        links.refs,
        list(links.refs_to.items()),
        list(links.refs_from.items()),
        *(dict(getattr(links, n)) for n in ("deps", "rdeps", "module_rdeps", "type_rdeps")),
        list(links.unresolved.items()),
        list(links.unresolved_at.items()),
    )


def facts_of(sources: dict[str, bytes]) -> dict[str, tuple[str, ModuleFacts]]:
    return {p: (blob_id(d), parse_facts(blob_id(d), d)) for p, d in sources.items()}


def forks_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counted: list[int] = []
    real = os.fork

    def fork() -> int:
        child = real()
        if child:
            counted.append(child)
        return child

    monkeypatch.setattr(forklink.os, "fork", fork)
    return counted


@pytest.mark.parametrize("helper_fails", [False, True])
def test_a_forked_half_links_the_same_tables_as_linking_in_turn(
    monkeypatch: pytest.MonkeyPatch, helper_fails: bool
) -> None:
    files = facts_of(generated_tree(60))
    alone = PythonIndex(files)
    monkeypatch.setattr(forklink, "SPLIT_MIN_USES", 1)
    if helper_fails:  # the child then exits with a failure status, sending nothing

        def broken(key: str, links: Links) -> bytes:
            raise MemoryError

        monkeypatch.setattr(forklink, "encode", broken)
    forks = forks_counted(monkeypatch)
    split = PythonIndex(files, cores=2)
    assert len(forks) == 1  # one child linked (or failed to link) the second half
    assert tables(split.links) == tables(alone.links)
    assert alone.links.refs and alone.links.unresolved and alone.links.type_rdeps


def test_a_child_that_hangs_is_killed_and_its_half_linked_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files = facts_of(generated_tree(60))
    alone = PythonIndex(files)
    monkeypatch.setattr(forklink, "SPLIT_MIN_USES", 1)
    monkeypatch.setattr(forklink, "CHILD_GRACE_S", 0.5)
    monkeypatch.setattr(forklink, "CHILD_GRACE_FACTOR", 0.0)

    def stuck(key: str, links: Links) -> bytes:  # the child blocks as on a lock nobody releases
        signal.pause()
        raise AssertionError("unreachable")

    monkeypatch.setattr(forklink, "encode", stuck)
    forks = forks_counted(monkeypatch)
    split = PythonIndex(files, cores=2)
    assert len(forks) == 1
    assert tables(split.links) == tables(alone.links)
    with pytest.raises(ChildProcessError):  # killed and reaped: no zombie left behind
        os.waitpid(forks[0], os.WNOHANG)


def test_a_small_tree_is_linked_without_a_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    forks = forks_counted(monkeypatch)
    PythonIndex(facts_of(generated_tree(5)), cores=2)
    assert forks == []


class Host:
    async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, AspError]]:
        await anyio.sleep(0)
        return {i: self.content[i] for i in ids}, {}

    def __init__(self, content: dict[str, bytes]) -> None:
        self.content = content


@pytest.mark.anyio
async def test_facts_parsed_in_worker_processes_are_the_facts_parsed_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pools: list[object] = []
    real_pool = reading.ProcessPoolExecutor

    def pool(*args: object, **kwargs: object) -> object:
        pools.append(real_pool(*args, **kwargs))  # type: ignore[arg-type]
        return pools[-1]

    monkeypatch.setattr(reading, "ProcessPoolExecutor", pool)
    content = {blob_id(d): d for d in generated_tree(MIN_POOL_BLOBS).values()}
    content[blob_id(b"def broken(:\n")] = b"def broken(:\n"  # a syntax error travels too
    engine = InspectEngine()
    fresh: list[ModuleFacts] = []
    done: list[int] = []
    made: dict[str, bytes] = {}
    got = await read_facts(
        engine,
        Host(content),  # type: ignore[arg-type]
        list(content),
        done.append,
        64,
        2,
        fresh=fresh,
        encoded=made,
    )
    assert len(got) == len(content) == len(fresh) and sum(done) == len(content)
    # the workers' cache entries are kept for the cache, each decoding to what was adopted
    assert set(made) == set(content) and all(decode(b, made[b]) == got[b] for b in content)
    assert engine.stats["parsed"] == len(content) and len(pools) == 1
    for blob, data in content.items():  # as entries: `global` names are not kept in them
        assert got[blob] == decode(blob, encode(parse_facts(blob, data)))


@pytest.mark.anyio
async def test_blobs_asked_for_first_are_parsed_first_into_the_same_facts() -> None:
    content = {blob_id(d): d for d in generated_tree(2 * MIN_POOL_BLOBS).values()}
    blobs = list(content)
    wanted = set(blobs[-12:])  # in the last chunk sent to the workers
    engine = InspectEngine()
    fresh: list[ModuleFacts] = []
    done: list[int] = []
    seen = reading.Seen()
    asked: list[bool] = []

    async def ask() -> None:
        await seen.read.wait()  # every batch read, most chunks not parsed yet
        assert seen.prioritize is not None and seen.data.keys() == content.keys()
        seen.prioritize(wanted)
        asked.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        got = await read_facts(
            engine,
            Host(content),  # type: ignore[arg-type]
            blobs,
            done.append,
            64,
            2,
            fresh=fresh,
            seen=seen,
        )
    order = [facts.blob for facts in fresh]
    assert asked and sorted(order) == sorted(content) and sum(done) == len(content)
    assert max(order.index(blob) for blob in wanted) < len(order) - 100
    assert seen.prioritize is None and seen.cached == 0 and not seen.refused
    for blob, data in content.items():
        assert got[blob] == decode(blob, encode(parse_facts(blob, data)))
