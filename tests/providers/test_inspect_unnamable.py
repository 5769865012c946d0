"""`asp-python-inspect` given strings with no UTF-8 form (engine.named_tree, pyindex/params.py).

JSON text can carry a lone surrogate as a `\\udcXX` escape (a host that wrote a file name that
was not UTF-8 that way); no answer or request can carry it back. The provider leaves such a file
out, says so and does not claim the answer is whole; a request with one is a typed input error.
The test host writes the escapes on the wire itself (its own encoder refuses them too).
"""

from __future__ import annotations

from typing import Any

import pytest
from anyio.abc import ByteSendStream

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from tests.support.definitions import assert_valid
from tests.support.provider_host import ProviderHost, provider_host

pytestmark = pytest.mark.anyio

MODULE = "reference_host.providers.python_inspect"
GRAPH = "sense-graph.schema.json#/$defs/graphResult"
IMPACT = "sense-graph.schema.json#/$defs/impactResult"
MARK = "@lone@"  # written on the wire as the escape of a lone surrogate
FILES: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/base.py": "def helper(v):\n    return v\n",
    "pkg/user.py": "from pkg.base import helper\n\n\ndef use():\n    return helper(1)\n",
    f"pkg/caf{MARK}.py": "from pkg.base import helper\n\n\ndef other():\n    return helper(2)\n",
    "pkg/déjà.py": "from pkg.base import helper\n\n\ndef été():\n    return helper(3)\n",
}


class Escaping(ByteSendStream):
    """The host's pipe to the provider, writing MARK as `\\udce9`."""

    def __init__(self, inner: ByteSendStream) -> None:
        self.inner = inner

    async def send(self, item: bytes) -> None:
        await self.inner.send(item.replace(MARK.encode(), b"\\udce9"))

    async def aclose(self) -> None:
        await self.inner.aclose()


def escaping(host: ProviderHost) -> None:
    host.endpoint._send_stream = Escaping(host.endpoint._send_stream)  # type: ignore[attr-defined]


async def ask(host: ProviderHost, method: str, params: dict[str, Any]) -> Any:
    return await host.endpoint.request(method, params, timeout=30)


@pytest.mark.needs_definitions
async def test_a_listed_path_without_utf8_form_is_left_out_and_said_so() -> None:
    async with provider_host(MODULE, files=FILES) as host:
        escaping(host)
        await host.start()
        refs = await ask(host, "sense/references", {"symbol": {"id": "pkg/base.py::helper"}})
        assert_valid(refs, GRAPH)
        assert {e["from"] for e in refs["edges"]} >= {"pkg/user.py::use", "pkg/déjà.py::été"}
        assert "caf" not in str(refs["nodes"] + refs["edges"])
        assert refs["data"]["incomplete"]["unnamable"] == ["pkg/caf\\udce9.py"]
        assert refs["data"]["truncated"] is True  # a caller may be in the file left out
        unnamed = blob_id(FILES[f"pkg/caf{MARK}.py"].encode())  # type: ignore[union-attr]
        assert unnamed not in host.reads and unnamed not in refs["validAsOf"]["blobs"]
        one = await ask(host, "sense/symbols", {"query": "pkg/déjà.py"})
        assert_valid(one, GRAPH)
        assert "pkg/déjà.py::été" in {n["id"] for n in one["nodes"]}
        assert one["data"]["truncated"] is True  # still the listing it was answered from
        change = host.changeset({"pkg/base.py": "def helper(v):\n    return v + 1\n"})
        impacted = await ask(host, "sense/impact", {"changeset": change, "scope": "workspace"})
        assert_valid(impacted, IMPACT)
        assert impacted["truncated"] is True
        assert "pkg/user.py" in impacted["impactedFiles"]


@pytest.mark.needs_definitions
async def test_request_strings_without_utf8_form_are_input_errors() -> None:
    async with provider_host(MODULE, files=FILES) as host:
        escaping(host)
        await host.start()
        for method, params in (
            ("sense/references", {"symbol": {"id": f"pkg.caf{MARK}.other"}}),
            ("sense/symbols", {"query": MARK}),
            ("sense/callers", {"symbol": {"id": "pkg/base.py::helper"}, "scope": {MARK: 1}}),
        ):
            with pytest.raises(AspError) as refused:
                await ask(host, method, params)
            assert refused.value.code == -32602 and refused.value.fail_class == "input"
            assert "UTF-8" in refused.value.message
        after = await ask(host, "sense/symbols", {"query": "pkg/user.py"})
        assert "pkg/user.py::use" in {n["id"] for n in after["nodes"]}
