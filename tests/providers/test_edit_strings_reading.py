"""A rename reads every Python file for strings that may name it (18 MB on Django): what it read
is kept by blob id, so the next request reads only what it lacks, and a read that outlasts the
rename's time box answers `incomplete` / `budget-exhausted`, recoverable, instead of running
past the host's call budget (on Django under load it did: the plan was a host-written error)."""

from __future__ import annotations

from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers import PYTHON_EDIT
from reference_host.providers.editing import ProposeRequest
from reference_host.providers.pyindex import InspectEngine, loaded
from reference_host.providers.pyindex.loaded import Loaded
from reference_host.providers.python_edit import PythonEditProvider
from tests.support.renamed import CountingHost

SOURCES = {
    "pkg/__init__.py": "",
    "pkg/api.py": "def fetch(url):\n    return url\n",
    **{f"other{n}.py": f"VALUE = {n}\n" for n in range(4)},
}


async def _plan(provider: PythonEditProvider, host: CountingHost) -> dict[str, Any]:
    index = InspectEngine().index_sources({p: s.encode() for p, s in SOURCES.items()})
    blobs = {path: blob_id(text.encode()) for path, text in SOURCES.items()}
    session = Loaded(index, blobs, {}, host, cache=provider.blob_cache)  # type: ignore[arg-type]
    request = ProposeRequest("rename", {"rev": "git:tree:x"}, ["**"], "proposal:1", {})
    request.args.update(symbol="pkg.api.fetch", newName="get_url")
    return await provider._rename(request, {"id": PYTHON_EDIT.id}, session)


@pytest.mark.anyio
async def test_a_second_rename_reads_no_file_again() -> None:
    provider = PythonEditProvider()
    first = CountingHost(SOURCES)
    assert (await _plan(provider, first))["status"] == "complete"
    assert len(set(first.asked)) == len(SOURCES)  # every file, once
    again = CountingHost(SOURCES)
    assert (await _plan(provider, again))["status"] == "complete"
    assert again.asked == []


@pytest.mark.anyio
async def test_a_read_past_the_time_box_is_incomplete_and_keeps_what_it_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(loaded, "READ_BATCH", 1)
    provider = PythonEditProvider()
    provider.strings_wait = 0.2
    stalled = CountingHost(SOURCES, open_batches=3)  # the definition's file, then two others
    plan = await _plan(provider, stalled)
    assert plan["status"] == "incomplete", plan
    assert plan["incomplete"]["reason"] == "budget-exhausted"
    assert plan["incomplete"]["recoverable"] is True
    assert plan["incomplete"]["detail"].startswith("read 2 of ")
    served = CountingHost(SOURCES)
    assert (await _plan(provider, served))["status"] == "complete"
    assert not set(served.asked) & set(stalled.asked), "what was read is not read again"
