"""`snapshot_async` (reference_host/status/snapshot.py): the status built on the event loop unless
a large file must be read, and always the same state the blocking reading gives."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from asp_protocol.canonical import blob_id
from reference_host.cli import build_context
from reference_host.repo import workfiles
from reference_host.repo.workfiles import LOOP_READ_BYTES, RACY_NS
from reference_host.status import snapshot as snapshot_module
from reference_host.status.snapshot import snapshot, snapshot_async
from tests.support.gitrepo import make_repo


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each function `snapshot_async` hands to a worker thread."""
    names: list[str] = []
    real = anyio.to_thread.run_sync

    async def counting(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        names.append(getattr(fn, "__name__", repr(fn)))
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(snapshot_module.anyio.to_thread, "run_sync", counting)
    return names


def test_the_loop_reading_hops_only_for_a_large_file_and_sees_every_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hops: list[str]
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    ctx = build_context(repo, None, "advisory")
    (repo / "a.py").write_text("x = 2\n")
    later = time.time_ns() + RACY_NS + 1_000_000  # as if the edit were older than the margin
    monkeypatch.setattr(workfiles.time, "time_ns", lambda: later)

    async def read() -> dict[str, str | None]:
        return (await snapshot_async(ctx))[0].state.differing

    assert anyio.run(read) == {"a.py": blob_id(b"x = 2\n")}
    hops.clear()
    assert anyio.run(read) == {"a.py": blob_id(b"x = 2\n")}
    assert hops == [], "nothing to read: built on the loop"
    (repo / "a.py").write_text("x = 3\n")  # same size: only its stat tells
    (repo / "new.py").write_text("new\n")
    expected = {"a.py": blob_id(b"x = 3\n"), "new.py": blob_id(b"new\n")}
    assert anyio.run(read) == expected
    assert hops == [], "small files are read on the loop"
    big = b"z" * (LOOP_READ_BYTES + 1)
    (repo / "big.bin").write_bytes(big)
    assert anyio.run(read) == {**expected, "big.bin": blob_id(big)}
    assert hops == ["result"], "a large file is read in a worker thread"
    assert snapshot(ctx).state.differing == anyio.run(read)


def test_a_plain_directory_is_read_in_a_worker_thread(tmp_path: Path, hops: list[str]) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.py").write_text("x = 1\n")
    ctx = build_context(tmp_path / "plain", None, "advisory")
    snap, _ = anyio.run(snapshot_async, ctx)
    assert not snap.state.vcs and hops == ["snapshot"]
