"""The host gives an inspect answer's garbage back (inspect/query.py): the bytes of every answer
page count toward the host's heap trimmer (providers/memory.py `HOST_HEAP`), with the blob bytes
it serves, so a burst of large pages is trimmed every few MiB instead of staying resident.
Through the real host and the real provider process."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_host.inspect import query
from reference_host.inspect.query import query_inspect
from reference_host.providers.memory import HeapTrimmer
from tests.host.test_inspect_host import host, request
from tests.support.gitrepo import make_repo
from tests.support.inspect_sample import ROUND_CENTS, SAMPLE

pytestmark = pytest.mark.anyio


@pytest.mark.needs_definitions
async def test_answer_pages_count_toward_the_host_trim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", SAMPLE)
    async with host(repo) as ctx:
        counting = HeapTrimmer(every=10**12)  # never due: only counts
        monkeypatch.setattr(query, "HOST_HEAP", counting)
        result = await query_inspect(ctx, request("callers", symbol=ROUND_CENTS))
        assert result["coverage"]["exhaustive"] is True
        assert counting.pending > 0 and counting.trims == 0  # the page's bytes, counted
        trimming = HeapTrimmer(every=1)  # due after any answer
        monkeypatch.setattr(query, "HOST_HEAP", trimming)
        again = await query_inspect(ctx, request("callers", symbol=ROUND_CENTS))
        assert again["data"] == result["data"]
        assert trimming.trims == 1 and trimming.pending == 0
