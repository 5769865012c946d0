"""`asp-python-inspect` as a real subprocess over real pipes, driven by the minimal test host.

Every result is validated against sense-graph.schema.json; the test host counts every callback so
the tests prove content arrives only through `workspace/listTree` / `workspace/readBlob`.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from asp_protocol.jsonrpc import RequestContext
from tests.support.definitions import assert_valid
from tests.support.inspect_sample import CART, MONEY, MONEY_ADD, PRICING, ROUND_CENTS, SAMPLE
from tests.support.provider_host import LIMITS, ProviderHost, provider_host

pytestmark = pytest.mark.anyio

MODULE = "reference_host.providers.python_inspect"
GRAPH = "sense-graph.schema.json#/$defs/graphResult"
IMPACT = "sense-graph.schema.json#/$defs/impactResult"
PY_BLOBS = {blob_id(text.encode()) for path, text in SAMPLE.items() if path.endswith(".py")}


async def ask(host: ProviderHost, method: str, params: dict[str, Any]) -> Any:
    return await host.endpoint.request(method, params, timeout=30)


def fresh(result: dict[str, Any], host: ProviderHost, extra: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """validAsOf names the host's baseline and only blobs the host holds."""
    assert result["validAsOf"]["rev"] == host.baseline["rev"]
    assert set(result["validAsOf"]["blobs"]) <= {blob_id(d) for d in host.files.values()} | set(
        extra
    )


@pytest.mark.needs_definitions
async def test_initialize_advertises_the_inspect_verbs_and_gates_work_until_initialized() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        result = await host.initialize()
        assert_valid(result, "initialize.schema.json#/$defs/result")
        assert result["capabilityFamilies"] == ["inspect"]
        inspect = result["capabilities"]["inspect"]
        assert set(inspect["verbs"]) == {"symbols", "references", "callers", "callees", "impact"}
        assert {"calls", "imports", "contains", "tested-by", "depends-on"} <= set(
            inspect["graph"]["edgeKinds"]
        )
        assert result["requestedPermissions"]["write"] is False
        with pytest.raises(AspError) as refused:
            await ask(host, "sense/symbols", {"query": ""})
        assert refused.value.code == -32010
        assert host.reads == [] and host.tree_calls == []


@pytest.mark.needs_definitions
async def test_every_verb_answers_valid_graphs_as_of_the_baseline() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        await host.start()
        symbols = await ask(host, "sense/symbols", {"query": MONEY})
        assert_valid(symbols, GRAPH)
        assert MONEY_ADD in {n["id"] for n in symbols["nodes"]}
        refs = await ask(
            host, "sense/references", {"symbol": {"id": ROUND_CENTS}, "scope": "workspace"}
        )
        assert_valid(refs, GRAPH)
        assert {e["from"] for e in refs["edges"]} >= {f"{PRICING}::total", f"{PRICING}::discounted"}
        assert set(refs["validAsOf"]["blobs"]) == {
            blob_id(SAMPLE[MONEY].encode()),
            blob_id(SAMPLE[PRICING].encode()),
        }
        up = await ask(host, "sense/callers", {"symbol": {"id": f"{CART}::Cart.sale"}, "depth": 2})
        assert_valid(up, GRAPH)
        assert "tests/test_cart.py::test_sale" in {n["id"] for n in up["nodes"]}
        down = await ask(host, "sense/callees", {"symbol": {"id": f"{PRICING}::discounted"}})
        assert_valid(down, GRAPH)
        assert ROUND_CENTS in {e["to"] for e in down["edges"]}
        for result in (symbols, refs, up, down):
            fresh(result, host)


@pytest.mark.needs_definitions
async def test_impact_of_a_leaf_change_reaches_tests_and_reads_the_after_blob() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        await host.start()
        edited = SAMPLE[MONEY].replace("other.amount)", "other.amount + 0)")
        changeset = host.changeset({MONEY: edited})
        after = changeset["changes"][0]["after"]
        result = await ask(host, "sense/impact", {"changeset": changeset, "scope": "workspace"})
        assert_valid(result, IMPACT)
        fresh(result, host, {after})
        assert after in host.reads and after in result["validAsOf"]["blobs"]
        changed = {n["id"] for n in result["changedNodes"]}
        assert MONEY_ADD in changed and ROUND_CENTS not in changed
        assert {"tests/test_money.py", "tests/test_cart.py"} <= set(result["impactedFiles"])
        assert result["truncated"] is False
        limited = await ask(
            host, "inspect/impact", {"changeset": changeset, "scope": "workspace", "limit": 2}
        )
        assert_valid(limited, IMPACT)
        assert limited["truncated"] is True


async def test_second_query_on_an_unchanged_baseline_reads_nothing_and_aliases_agree() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        await host.start()
        first = await ask(host, "sense/references", {"symbol": {"id": "shop.pricing.total"}})
        assert (
            set(host.reads) == PY_BLOBS
        )  # Python files only, each once; pyproject.toml never read
        assert len(host.reads) == len(PY_BLOBS) and len(host.tree_calls) == 1
        again = await ask(host, "inspect/references", {"symbol": {"id": "shop.pricing.total"}})
        assert again == first
        assert len(host.reads) == len(PY_BLOBS) and len(host.tree_calls) == 1


@pytest.mark.needs_definitions
async def test_baseline_change_reparses_only_the_changed_blob() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        await host.start()
        await ask(host, "sense/symbols", {"query": ""})
        reads = len(host.reads)
        host.files[MONEY] = (
            SAMPLE[MONEY] + "\n\ndef tip(value):\n    return round_cents(value)\n"
        ).encode()
        await host.endpoint.notify("workspace/baselineChanged", {"baseline": host.baseline})
        result = await ask(host, "sense/callers", {"symbol": {"id": ROUND_CENTS}})
        assert_valid(result, GRAPH)
        fresh(result, host)
        assert f"{MONEY}::tip" in {n["id"] for n in result["nodes"]}
        assert len(host.reads) == reads + 1 and len(host.tree_calls) == 2


@pytest.mark.needs_definitions
async def test_request_baseline_override_is_listed_and_echoed() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        await host.start()
        other = {"rev": "git:tree:override"}
        result = await ask(host, "sense/symbols", {"query": "Money", "baseline": other})
        assert_valid(result, GRAPH)
        assert result["validAsOf"]["rev"] == "git:tree:override"
        assert host.tree_calls[-1]["baseline"] == other


@pytest.mark.needs_definitions
async def test_limit_truncates_and_bad_params_are_typed_input_errors() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        await host.start()
        small = await ask(host, "sense/symbols", {"query": "", "limit": 2})
        assert_valid(small, GRAPH)
        assert len(small["nodes"]) == 2 and small["data"]["truncated"] is True
        bad = [
            ("sense/symbols", {"query": "", "extra": 1}),
            ("sense/references", {"symbol": "round_cents"}),
            ("sense/callers", {"symbol": {"id": ROUND_CENTS}, "depth": 0}),
            ("sense/symbols", {"query": "", "limit": True}),
            (
                "sense/impact",
                {
                    "changeset": {
                        "baseline": {"rev": "x"},
                        "changes": [
                            {"path": "../etc", "kind": "delete", "before": "blob:sha256:00"}
                        ],
                    },
                    "scope": "workspace",
                },
            ),
            (
                "sense/impact",
                {"changeset": {"baseline": {"rev": "x"}, "changes": []}, "scope": "everything"},
            ),
        ]
        for method, params in bad:
            with pytest.raises(AspError) as error:
                await ask(host, method, params)
            assert error.value.code == -32602 and error.value.fail_class == "input", method
        unknown = await ask(host, "sense/references", {"symbol": {"id": "nowhere.nothing"}})
        assert_valid(unknown, GRAPH)
        assert unknown["nodes"] == [] and unknown["data"]["unresolved"] is True


@pytest.mark.needs_definitions
async def test_refused_and_out_of_grant_content_is_reported_not_guessed() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        grant = {"read": ["src/**"], "write": False, "network": False, "resourceLimits": LIMITS}
        await host.start(grant)
        refused_blob = blob_id(SAMPLE[PRICING].encode())
        original = host._read_blob

        async def refusing(params: Any, ctx: RequestContext) -> Any:
            if refused_blob in params["blobs"]:
                raise AspError(-32012, "scope_denied", fail_class="policy")
            return await original(params, ctx)

        host.endpoint.register("workspace/readBlob", refusing)
        result = await ask(host, "sense/references", {"symbol": {"id": ROUND_CENTS}})
        assert_valid(result, GRAPH)
        assert result["data"]["incomplete"]["unreadable"] == [PRICING]
        assert result["data"]["truncated"] is True  # a reference may be in the unread file
        assert all(
            not p.startswith("tests/") for p in (n["location"]["path"] for n in result["nodes"])
        )
        assert refused_blob not in result["validAsOf"]["blobs"]
        assert all(
            blob_id(SAMPLE[p].encode()) not in host.reads for p in SAMPLE if p.startswith("tests/")
        )


@pytest.mark.needs_definitions
async def test_host_serving_wrong_bytes_or_refusing_the_tree_gets_typed_errors() -> None:
    async with provider_host(MODULE, files=SAMPLE) as host:
        await host.start()

        async def lying(params: Any, ctx: RequestContext) -> Any:
            return {
                "blobs": [
                    {"id": b, "encoding": "base64", "bytes": base64.b64encode(b"x = 1\n").decode()}
                    for b in params["blobs"]
                ]
            }

        host.endpoint.register("workspace/readBlob", lying)
        lied_to = await ask(host, "sense/symbols", {"query": ""})
        # Bytes that do not hash to their blob id are never indexed: the answer says so.
        python_files = sorted(p for p in SAMPLE if p.endswith(".py"))
        assert sorted(lied_to["data"]["incomplete"]["unreadable"]) == python_files
        assert lied_to["nodes"] == [] and lied_to["validAsOf"]["blobs"] == []

        async def no_tree(params: Any, ctx: RequestContext) -> Any:
            raise AspError(-32011, "stale_baseline")

        host.endpoint.register("workspace/listTree", no_tree)
        with pytest.raises(AspError) as unreachable:
            await ask(host, "sense/symbols", {"query": "", "baseline": {"rev": "git:tree:gone"}})
        assert unreachable.value.code == -32010 and unreachable.value.fail_class == "health"
        # and the provider keeps serving
        host.endpoint.register("workspace/readBlob", host._read_blob)
        host.endpoint.register("workspace/listTree", host._list_tree)
        assert_valid(await ask(host, "sense/symbols", {"query": "Money"}), GRAPH)
