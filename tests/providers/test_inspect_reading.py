"""Reading facts for many blobs (reference_host/providers/pyindex/reading.py): the host's next
readBlob batch is requested while this process loads or parses the current one, never more than
one batch at a time, and the facts are exactly those of reading in turn; a failed read is raised
as itself."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError, ProtocolViolation
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.diskcache import FactCache
from reference_host.providers.pyindex.facts import ModuleFacts, parse_facts
from reference_host.providers.pyindex.reading import read_facts

pytestmark = pytest.mark.anyio


def modules(count: int) -> dict[str, bytes]:
    texts = [
        f"import os\n\n\ndef f_{n}(v):\n    return os.path.join(v, '{n}')\n" for n in range(count)
    ]
    return {blob_id(t.encode()): t.encode() for t in texts}


class FakeHost:
    """`read_each` of the host callbacks over a dict; records how many reads overlap."""

    def __init__(self, content: dict[str, bytes], fail_at: int = -1) -> None:
        self.content = content
        self.calls: list[list[str]] = []
        self.outstanding = 0
        self.most_outstanding = 0
        self.second_read = threading.Event()
        self.fail_at = fail_at

    async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, AspError]]:
        self.calls.append(list(ids))
        if len(self.calls) == 2:
            self.second_read.set()
        self.outstanding += 1
        self.most_outstanding = max(self.most_outstanding, self.outstanding)
        try:
            await anyio.sleep(0)
            if len(self.calls) - 1 == self.fail_at:
                raise ProtocolViolation("readBlob result has no blobs array")
            return {i: self.content[i] for i in ids}, {}
        finally:
            self.outstanding -= 1


class WaitingCache(FactCache):
    """A cache whose first load waits (in its worker thread) for the host's second read."""

    def __init__(self, root: Path, host: FakeHost) -> None:
        super().__init__(root, "build")
        self.host = host
        self.overlapped: list[bool] = []

    def load_many(self, blobs: object) -> dict[str, ModuleFacts]:
        if not self.overlapped:
            self.overlapped.append(self.host.second_read.wait(timeout=30))
        return super().load_many(blobs)  # type: ignore[arg-type]


async def test_the_next_batch_is_read_while_the_current_one_is_loaded(tmp_path: Path) -> None:
    content = modules(10)
    host = FakeHost(content)
    cache = WaitingCache(tmp_path / "cache", host)
    cache.store_many(parse_facts(b, d) for b, d in list(content.items())[:4])  # a partial cache
    fresh: list[ModuleFacts] = []
    progress: list[int] = []
    engine = InspectEngine()
    got = await read_facts(
        engine,
        host,
        list(content),
        progress.append,
        batch=3,
        cache=cache,
        fresh=fresh,  # type: ignore[arg-type]
    )
    assert cache.overlapped == [True]  # the second read was asked before the first load ended
    assert host.most_outstanding == 1  # but never two reads at once
    assert [len(c) for c in host.calls] == [3, 3, 3, 1]
    assert [b for call in host.calls for b in call] == list(content)  # each once, in order
    assert got == {b: parse_facts(b, d) for b, d in content.items()}
    assert sorted(f.blob for f in fresh) == sorted(list(content)[4:])  # only the parsed ones
    assert sum(progress) == len(content)
    assert engine.stats["cacheHits"] == 4 and engine.stats["parsed"] == 6


async def test_a_failed_read_is_raised_as_itself_and_stops_the_reading(tmp_path: Path) -> None:
    content = modules(9)
    host = FakeHost(content, fail_at=1)
    with pytest.raises(ProtocolViolation):
        await read_facts(InspectEngine(), host, list(content), batch=3)  # type: ignore[arg-type]
    assert len(host.calls) <= 3  # nothing read after the failure was seen
