"""Paged inspect answers (reference_host/inspect/paging.py, providers/pyindex/paging.py) and the
reuse of the work-tree state between queries (inspect/snapshots.py, inspect/watch.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.errors import AspError
from reference_host.inspect.paging import PAGE_SLACK_BYTES
from reference_host.inspect.query import query_inspect
from tests.host.test_inspect_host import RESULT, host, request
from tests.host.test_inspect_indexing import generated
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo, write_files
from tests.support.inspect_sample import MONEY, ROUND_CENTS, SAMPLE

pytestmark = pytest.mark.anyio
PAGE = 4096
ENVELOPE_ALLOWANCE = 16 * 1024


@pytest.fixture
def big(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", generated(120))


def only(result: dict[str, Any]) -> dict[str, Any]:
    (answer,) = result["data"]["results"]
    return dict(answer["result"])


async def pages(ctx: Any, fields: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of one question, following the host's cursors."""
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        asked = {**fields, "pageBytes": PAGE, **({"cursor": cursor} if cursor else {})}
        result = await query_inspect(ctx, request(**asked))
        assert_valid(result, RESULT)
        answer = only(result)
        assert len(json.dumps(answer)) <= PAGE + PAGE_SLACK_BYTES
        # the whole host answer: the page plus the host's envelope (coverage, receipt)
        assert len(json.dumps(result)) <= PAGE + PAGE_SLACK_BYTES + ENVELOPE_ALLOWANCE
        out.append(result)
        cursor = answer["data"]["page"]["cursor"]
        if cursor is None:
            return out
        assert answer["data"]["truncated"] is True and result["coverage"]["exhaustive"] is False
        assert len(out) < 100


@pytest.mark.needs_definitions
async def test_references_come_in_bounded_pages_that_add_up_to_the_whole(big: Path) -> None:
    async with host(big) as ctx:
        whole = only(await query_inspect(ctx, request("references", symbol=ROUND_CENTS)))
        assert whole["data"]["page"]["cursor"] is None
        assert len(json.dumps(whole)) > 3 * PAGE  # the question really needs several pages
        paged = await pages(ctx, {"verb": "references", "symbol": ROUND_CENTS})
        assert len(paged) >= 3
        last = only(paged[-1])
        assert paged[-1]["coverage"]["exhaustive"] is True
        assert last["data"]["page"]["total"] == {
            "nodes": len(whole["nodes"]),
            "edges": len(whole["edges"]),
        }
        assert [e for p in paged for e in only(p)["edges"]] == whole["edges"]
        assert [n["id"] for p in paged for n in only(p)["nodes"]] == [
            n["id"] for n in whole["nodes"]
        ]


@pytest.mark.needs_definitions
async def test_impact_pages_and_cursors_are_bound_to_their_question(big: Path) -> None:
    async with host(big) as ctx:
        whole = only(await query_inspect(ctx, request("impact", paths=[MONEY])))
        paged = await pages(ctx, {"verb": "impact", "paths": [MONEY]})
        assert len(paged) >= 2
        files = [f for p in paged for f in only(p)["data"]["impactedFiles"]]
        assert files == whole["data"]["impactedFiles"]
        first_cursor = only(paged[0])["data"]["page"]["cursor"]
        for bad in (first_cursor[:-4] + "AAAA", "not-a-cursor"):
            with pytest.raises(AspError) as error:
                await query_inspect(ctx, request("impact", paths=[MONEY], cursor=bad))
            assert error.value.code == -32602
        with pytest.raises(AspError) as other:
            await query_inspect(
                ctx,
                request(
                    "impact",
                    paths=["src/shop/pricing.py"],
                    cursor=first_cursor,
                    pageBytes=PAGE + 1,
                ),
            )
        assert other.value.code == -32602


async def test_the_state_is_reused_only_while_nothing_changed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", SAMPLE)
    async with host(repo) as ctx:
        reads = 0
        original = ctx.workspace.state

        def counted() -> Any:
            nonlocal reads
            reads += 1
            return original()

        ctx.workspace.state = counted  # type: ignore[method-assign]
        ask = request("callers", symbol=ROUND_CENTS)
        first = await query_inspect(ctx, ask)
        await query_inspect(ctx, ask)
        assert reads == 1  # nothing changed: no second `git status`
        write_files(repo, {MONEY: SAMPLE[MONEY] + "\n\ndef tip(v):\n    return round_cents(v)\n"})
        after = await query_inspect(ctx, ask)
        assert reads == 2
        assert after["receipt"]["baseline"] != first["receipt"]["baseline"]
        assert f"{MONEY}::tip" in {n["id"] for n in only(after)["nodes"]}
