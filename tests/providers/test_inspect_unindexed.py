"""`asp-python-inspect` with files it holds no facts of (pyindex/unindexed.py): one that does not
parse (here a real syntax error; in a real project often code for a newer Python) may hold uses
of the asked name, so an answer it may change is not claimed whole; one that cannot spell the
name leaves the answer exhaustive."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.definitions import assert_valid
from tests.support.provider_host import ProviderHost, provider_host

pytestmark = pytest.mark.anyio

MODULE = "reference_host.providers.python_inspect"
GRAPH = "sense-graph.schema.json#/$defs/graphResult"
IMPACT = "sense-graph.schema.json#/$defs/impactResult"
FILES: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/base.py": "def helper(v):\n    return v\n\n\ndef other(v):\n    return v\n",
    "pkg/user.py": "from pkg.base import helper\n\n\ndef use():\n    return helper(1)\n",
    # uses helper, but does not parse: its use is unknown to the index
    "pkg/broken.py": "from pkg.base import helper\n\n\ndef later(:\n    return helper(2)\n",
    # does not parse either, and spells nothing the queries ask about
    "tools/fixture.py": "def f(:\n    pass\n",
    "tests/test_user.py": "from pkg.user import use\n\n\ndef test_use():\n    assert use() == 1\n",
}


async def ask(host: ProviderHost, method: str, params: dict[str, Any]) -> Any:
    return await host.endpoint.request(method, params, timeout=30)


@pytest.mark.needs_definitions
@pytest.mark.parametrize("args", [(), ("--hold-build-index",)], ids=["built", "early"])
async def test_an_unparsed_file_spelling_the_name_makes_the_answer_not_whole(
    args: tuple[str, ...],
) -> None:
    """Also for an answer made early, from part of the tree in a forked child (early.py), while
    the whole index is held back: a test run that answered early passed the check unmarked."""
    async with provider_host(MODULE, *args, files=FILES) as host:
        await host.start()
        refs = await ask(host, "sense/references", {"symbol": {"id": "pkg/base.py::helper"}})
        assert_valid(refs, GRAPH)
        assert "pkg/user.py::use" in {e["from"] for e in refs["edges"]}
        assert refs["data"]["truncated"] is True
        [entry] = refs["data"]["incomplete"]["unindexed"]
        assert entry["path"] == "pkg/broken.py" and "SyntaxError" in entry["why"]
        assert refs["data"]["incomplete"]["unindexedCount"] == 1
        # no unparsed file spells `other` (nor any node of its answer): exhaustive
        clean = await ask(host, "sense/references", {"symbol": {"id": "pkg/base.py::other"}})
        assert clean["data"]["truncated"] is False and "incomplete" not in clean["data"]
        callers = await ask(host, "sense/callers", {"symbol": {"id": "pkg/base.py::helper"}})
        assert callers["data"]["truncated"] is True
        # defined only in the file that does not parse: nothing found, and not claimed whole
        later = await ask(host, "sense/references", {"symbol": {"id": "later"}})
        assert later["nodes"] == [] and later["data"]["truncated"] is True


@pytest.mark.needs_definitions
async def test_symbols_and_impact_say_what_they_could_not_look_at() -> None:
    async with provider_host(MODULE, files=FILES) as host:
        await host.start()
        folder = await ask(host, "sense/symbols", {"query": "tools"})
        assert folder["data"]["truncated"] is True
        assert [e["path"] for e in folder["data"]["incomplete"]["unindexed"]] == [
            "tools/fixture.py"
        ]
        named = await ask(host, "sense/symbols", {"query": "later"})  # only in pkg/broken.py
        assert named["nodes"] == [] and named["data"]["truncated"] is True
        pkg = await ask(host, "sense/symbols", {"query": "pkg/user.py"})
        assert pkg["data"]["truncated"] is False
        change = host.changeset({"pkg/base.py": "def helper(v):\n    return v + 1\n"})
        impacted = await ask(host, "sense/impact", {"changeset": change, "scope": "workspace"})
        assert_valid(impacted, IMPACT)
        assert "pkg/user.py" in impacted["impactedFiles"]
        assert impacted["truncated"] is True  # pkg/broken.py imports pkg.base, unseen
        test_change = host.changeset({"tests/test_user.py": "def test_use():\n    assert 1\n"})
        alone = await ask(host, "sense/impact", {"changeset": test_change, "scope": "workspace"})
        assert alone["truncated"] is False, "no unparsed file spells test_user"
