"""A large change is analysed on both cores (check_pool.py, check_summary.py), with exactly the
findings, cache statuses and summaries the one-file-at-a-time path gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers import check_pool
from reference_host.providers.check_summary import Summaries, summarize
from reference_host.providers.findings_cache import FindingsCache, Job
from reference_host.providers.python_rules import analyse
from tests.support.change_eval import evaluate_edit, findings_of

pytestmark = pytest.mark.anyio


def _source(n: int) -> bytes:
    return f"import os\n\n\ndef f{n}(a, b={n}):\n    return a + undefined_{n}\n".encode()


def _jobs(count: int) -> list[Job]:
    return [(blob_id(_source(n)), _source(n), None, False) for n in range(count)]


async def _progress(_index: int) -> None:
    return None


async def test_the_pool_primes_the_cache_with_what_the_thread_would_find() -> None:
    jobs = _jobs(check_pool.MIN_POOLED + 5)
    cache = FindingsCache()
    done = await check_pool.analyse_many(cache, jobs, _progress, len(jobs))
    assert done == len(jobs) or check_pool.WORKERS < 2
    for blob, data, params, init in jobs:
        found, hit = await cache.findings(blob, data, params, init)
        assert found == analyse(data, params, init)
        assert hit is False  # made for this request: not a cache hit
        assert (await cache.findings(blob, data, params, init))[1] is True  # the next time it is


async def test_a_few_files_stay_on_the_thread() -> None:
    cache = FindingsCache()
    assert await check_pool.analyse_many(cache, _jobs(3), _progress, 3) == 0
    assert cache.missing(_jobs(3)) == _jobs(3)


async def test_summaries_made_by_the_workers_equal_those_made_here() -> None:
    blobs = {blob: data for blob, data, _, _ in _jobs(check_pool.MIN_POOLED + 3)}
    blobs[blob_id(b"def broken(:\n")] = b"def broken(:\n"
    made = await Summaries().of(blobs)
    assert made == {blob: summarize(data) for blob, data in blobs.items()}
    assert made[blob_id(b"def broken(:\n")].parsed is False


def test_a_change_of_many_files_is_judged_as_one_of_few(tmp_path: Path) -> None:
    """Through the real host: 50 changed modules (over the pool's threshold), each with its own
    undefined name, and one caller broken by a changed signature."""
    files = {f"pkg/m{n}.py": f"def f{n}(a):\n    return a\n" for n in range(50)}
    files |= {"pkg/__init__.py": "", "use.py": "from pkg.m7 import f7\n\nf7(1)\n"}
    edits: dict[str, str | None] = {
        f"pkg/m{n}.py": f"def f{n}(a, b):\n    return a + undefined_{n}\n" for n in range(50)
    }
    result = evaluate_edit(tmp_path, files, edits, comparison=None)
    undefined = findings_of(result, "python/undefined-name")
    assert sorted(p for p, _, _ in undefined) == sorted(f"pkg/m{n}.py" for n in range(50))
    assert [(p, line) for p, line, _ in findings_of(result, "python/broken-call")] == [
        ("use.py", 2)
    ]
    assert result["decision"] == "deny"


def test_many_importers_are_judged_on_the_workers_as_one_would_be(tmp_path: Path) -> None:
    """45 importers (over the pool's threshold) of a name the change removes: each is found."""
    files = {"pkg/__init__.py": "", "pkg/base.py": "X = 1\nY = 2\n"}
    files |= {f"pkg/use{n}.py": "from pkg.base import X, Y\n\nprint(X, Y)\n" for n in range(45)}
    result = evaluate_edit(tmp_path, files, {"pkg/base.py": "Y = 2\n"}, comparison=None)
    found = findings_of(result, "python/broken-import")
    assert sorted(p for p, _, _ in found) == sorted(f"pkg/use{n}.py" for n in range(45))
    assert result["decision"] == "deny"
