"""An early (query-scoped) answer through the real host and provider while the index build is held
after reading its tree (the provider's test-only `--hold-build-index`): complete, the same answer
a host whose build finished gives, and the queries it cannot answer stay "indexing" and never
count toward quarantine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from reference_host.context import HostContext
from reference_host.inspect.query import query_inspect
from tests.host.test_inspect_host import RESULT, host, request
from tests.host.test_inspect_indexing import PROVIDER, generated, inspect_with
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo
from tests.support.inspect_sample import ROUND_CENTS

pytestmark = pytest.mark.anyio
QUERIES = [
    ("references", {"symbol": ROUND_CENTS}),
    ("callers", {"symbol": ROUND_CENTS}),
    ("symbols", {"query": "round_cents"}),
]


async def complete(ctx: HostContext, verb: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The first exhaustive answer, polling while the provider answers "indexing"."""
    for _ in range(500):
        result = await query_inspect(ctx, request(verb, **fields))
        if result["coverage"]["exhaustive"]:
            return result
        assert result["coverage"]["degraded"][0]["reason"] == "incomplete"
        await anyio.sleep(0.02)
    raise AssertionError(f"no complete {verb} answer")


def answer_of(result: dict[str, Any]) -> Any:
    (answer,) = result["data"]["results"]
    return answer["result"]


@pytest.mark.needs_definitions
async def test_a_held_build_answers_completely_and_as_the_finished_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", generated(30))
    held: dict[str, Any] = {}
    settings = inspect_with("--index-wait-ms", "0", "--hold-build-index")
    async with host(repo, extra=settings) as ctx:
        for verb, fields in QUERIES:
            result = await complete(ctx, verb, fields)
            assert_valid(result, RESULT)
            assert result["coverage"]["degraded"] == []
            held[verb] = answer_of(result)
        assert {f"src/gen/mod_{n}.py::f_{n}" for n in range(30)} <= {
            e["from"] for e in held["callers"]["edges"]
        }
        # the build is still held: what the scoped path cannot answer is still "indexing"
        for _ in range(3):
            still = await query_inspect(ctx, request("impact", paths=["src/shop/money.py"]))
            assert still["coverage"]["exhaustive"] is False
            assert "indexing" in still["coverage"]["degraded"][0]["detail"]
        record = ctx.supervisor.record(PROVIDER)
        assert record.failures == 0 and not record.quarantined
    async with host(repo, extra=inspect_with("--index-wait-ms", "0")) as ctx:
        for verb, fields in QUERIES:
            assert answer_of(await complete(ctx, verb, fields)) == held[verb]
