"""Inspect pages of non-ASCII code and requests with no UTF-8 form, through the real host and the
real `asp-python-inspect` (reference_host/providers/pyindex/paging.py, inspect/params.py).

The provider cuts a page by the bytes the host measures it with (`framing.compact_json`, UTF-8),
so a page of CJK names stays inside the host's page bound; a request string with a lone surrogate
is a typed input error, never a crash, and the host keeps answering.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asp_protocol.errors import AspError
from asp_protocol.framing import compact_json
from reference_host.inspect.paging import DEFAULT_PAGE_BYTES, provider_page_bytes
from reference_host.inspect.query import query_inspect
from reference_host.providers.pyindex.paging import IMPACT_LISTS, item_paths, measure
from tests.host.test_inspect_host import RESULT, host, request
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo

pytestmark = pytest.mark.anyio
# a page's own envelope the cut does not weigh item by item: validAsOf.rev and data.page
ENVELOPE = 1024
WIDE = "価格計算"  # 3 UTF-8 bytes per character


def wide_tree(modules: int = 30, functions: int = 30) -> dict[str, str | bytes]:
    """Modules under a CJK package whose functions have long CJK names (valid identifiers)."""
    files: dict[str, str | bytes] = {}
    for m in range(modules):
        body = "".join(f"def {WIDE * 6}_{f}(値):\n    return 値\n\n\n" for f in range(functions))
        files[f"{WIDE}/模块_{WIDE * 3}_{m}.py"] = body
    return files


def only(result: dict[str, Any]) -> dict[str, Any]:
    (answer,) = result["data"]["results"]
    return dict(answer["result"])


@pytest.mark.needs_definitions
async def test_a_page_of_wide_characters_is_cut_by_its_utf8_bytes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", wide_tree())
    async with host(repo) as ctx:
        whole = only(
            await query_inspect(ctx, request("symbols", query="*", pageBytes=4 * 1024 * 1024))
        )
        assert whole["data"]["page"]["cursor"] is None
        # more characters than one default page holds bytes: counted in characters, each page
        # would be about three times the bytes the host allows
        assert len(compact_json(whole)) > 2 * provider_page_bytes(DEFAULT_PAGE_BYTES)
        nodes: list[str] = []
        cursor = None
        pages = 0
        while True:
            asked = {"query": "*", **({"cursor": cursor} if cursor else {})}
            result = await query_inspect(ctx, request("symbols", **asked))
            assert_valid(result, RESULT)
            assert result["coverage"]["degraded"] == []  # never "exceeds the page bound"
            page = only(result)
            size = len(compact_json(page))
            assert size <= provider_page_bytes(DEFAULT_PAGE_BYTES) + ENVELOPE
            nodes += [n["id"] for n in page["nodes"]]
            pages += 1
            cursor = page["data"]["page"]["cursor"]
            if cursor is None:
                break
        assert pages >= 3
        assert nodes == [n["id"] for n in whole["nodes"]]
        assert result["coverage"]["exhaustive"] is True


@pytest.mark.needs_definitions
async def test_a_request_string_without_utf8_form_is_an_input_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", wide_tree(2, 2))
    async with host(repo) as ctx:
        for bad in (
            request("references", symbol=f"{WIDE}.x\udce9"),
            request("symbols", query="\ud800"),
            request("impact", paths=[f"{WIDE}/caf\udce9.py"]),
            request("symbols", **{"query": "*", "cursor": "\udfff"}),
        ):
            with pytest.raises(AspError) as refused:
                await query_inspect(ctx, bad)
            assert refused.value.code == -32602 and refused.value.fail_class == "input"
            assert "UTF-8" in refused.value.message
            compact_json(refused.value.to_wire())  # the refusal itself can be written
        after = await query_inspect(ctx, request("symbols", query="*"))
        assert after["coverage"]["exhaustive"] is True and len(only(after)["nodes"]) == 6


def test_item_measures_are_each_items_bytes_and_files() -> None:
    answer = {
        "impactedNodes": [
            {"id": f"{WIDE}.py", "location": {"path": f"{WIDE}.py"}},
            {"id": "b", "location": {"path": "b.py", "range": {}}},
            {"id": "odd", "location": "nowhere"},
        ],
        "impactedFiles": [f"{WIDE}.py", "b.py"],
        "edges": [{"kind": "calls", "from": "a", "to": "b"}],
    }
    measured = measure(answer, IMPACT_LISTS)
    for name in IMPACT_LISTS:
        assert [size for size, _files in measured[name]] == [
            len(compact_json(item)) for item in answer[name]
        ]
        assert [files for _size, files in measured[name]] == [
            frozenset(item_paths({name: [item]}, (name,))) for item in answer[name]
        ]
