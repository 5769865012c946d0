"""`host/queryInspect` routing (reference_host/inspect/query.py) on a real git repo with real providers.

The host context is built exactly as `asp-host serve` builds it; providers are launched by the
host's supervisor from (built-in or test) trusted manifests. Every result is validated against
outer-host.schema.json#/$defs/queryInspectResult.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from asp_protocol.errors import AspError
from reference_host.cli import build_context
from reference_host.context import HostContext
from reference_host.inspect.query import query_inspect
from reference_host.providers import PYTHON_INSPECT
from reference_host.trust.manifests import InstalledProvider, ServerManifest, builtin_manifest
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo, snapshot_tree, write_files
from tests.support.inspect_sample import MONEY, PRICING, ROUND_CENTS, SAMPLE

pytestmark = pytest.mark.anyio
RESULT = "outer-host.schema.json#/$defs/queryInspectResult"


@asynccontextmanager
async def host(
    repo: Path, extra: dict[str, InstalledProvider] | None = None
) -> AsyncIterator[HostContext]:
    ctx = build_context(repo, None, "advisory")
    if extra is not None:
        ctx.providers.clear()
        ctx.providers.update(extra)
        ctx.supervisor.providers = ctx.providers
    async with anyio.create_task_group() as tg:
        ctx.supervisor.attach(tg)
        try:
            yield ctx
        finally:
            with anyio.CancelScope(shield=True):
                await ctx.supervisor.shutdown_all()
            tg.cancel_scope.cancel()


def fake_inspect(behavior: str, provider_id: str = "fake-inspect") -> InstalledProvider:
    """A trusted manifest declaring `inspect` for the scripted fake provider."""
    template = builtin_manifest(PYTHON_INSPECT)
    assert template is not None
    raw = dict(template.raw)
    raw["server"] = {"id": provider_id, "name": provider_id, "version": "0.1.0"}
    raw["entrypoint"] = {
        "transport": "stdio",
        "bin": sys.executable,
        "args": [
            "-m",
            "reference_host.providers.fake",
            "--behavior",
            behavior,
            "--id",
            provider_id,
        ],
    }
    return InstalledProvider(
        provider_id, "test", "valid", ServerManifest.model_validate(raw), raw=raw
    )


def request(verb: str, **fields: Any) -> dict[str, Any]:
    return {"callSite": "interactive", "request": {"verb": verb, **fields}}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", SAMPLE)


@pytest.mark.needs_definitions
async def test_references_through_the_builtin_provider(repo: Path) -> None:
    before = snapshot_tree(repo)
    async with host(repo) as ctx:
        result = await query_inspect(ctx, request("references", symbol="shop.money.round_cents"))
        assert_valid(result, RESULT)
        assert result["coverage"]["ran"] == ["asp-python-inspect/inspect"]
        assert result["coverage"]["degraded"] == [] and result["coverage"]["exhaustive"] is True
        (answer,) = result["data"]["results"]
        assert answer["provider"] == "asp-python-inspect"
        graph = answer["result"]
        assert {e["from"] for e in graph["edges"]} >= {
            f"{PRICING}::total",
            f"{PRICING}::discounted",
        }
        assert all(e["to"] == ROUND_CENTS for e in graph["edges"])
        state = ctx.workspace.state()
        assert result["validAsOf"]["rev"] == state.rev == graph["validAsOf"]["rev"]
        receipt = result["receipt"]
        assert receipt["kind"] == "inspect" and receipt["capabilityFamily"] == "inspect"
        assert receipt["callSite"] == "interactive"
        assert receipt["providerProvenance"][0]["capability"] == "inspect"
        again = await query_inspect(ctx, request("references", symbol="shop.money.round_cents"))
        assert again["data"] == result["data"]
    assert snapshot_tree(repo) == before


@pytest.mark.needs_definitions
async def test_impact_of_a_leaf_path_reaches_its_tests_and_symbols_of_a_path(repo: Path) -> None:
    async with host(repo) as ctx:
        result = await query_inspect(ctx, request("impact", paths=[MONEY]))
        assert_valid(result, RESULT)
        graph = result["data"]["results"][0]["result"]
        assert {"tests/test_money.py", "tests/test_cart.py"} <= set(graph["data"]["impactedFiles"])
        assert any(n["id"] == "tests/test_cart.py" and n["test"] for n in graph["nodes"])
        symbols = await query_inspect(ctx, request("symbols", path=MONEY, limit=2))
        assert_valid(symbols, RESULT)
        listed = symbols["data"]["results"][0]["result"]
        assert len(listed["nodes"]) == 2 and listed["data"]["truncated"] is True


@pytest.mark.needs_definitions
async def test_work_tree_edits_are_answered_as_of_the_current_snapshot(repo: Path) -> None:
    write_files(
        repo, {MONEY: SAMPLE[MONEY] + "\n\ndef tip(value):\n    return round_cents(value)\n"}
    )
    async with host(repo) as ctx:
        result = await query_inspect(ctx, request("callers", symbol=ROUND_CENTS))
        assert_valid(result, RESULT)
        assert "dirty" in result["receipt"]["baseline"]
        nodes = {n["id"] for n in result["data"]["results"][0]["result"]["nodes"]}
        assert f"{MONEY}::tip" in nodes


@pytest.mark.needs_definitions
async def test_stale_baseline_is_degraded_not_empty(repo: Path) -> None:
    async with host(repo) as ctx:
        params = {
            **request("references", symbol="round_cents"),
            "baseline": {"rev": "git:tree:" + "0" * 40},
        }
        result = await query_inspect(ctx, params)
        assert_valid(result, RESULT)
        assert result["data"]["results"] == []
        assert [d["reason"] for d in result["coverage"]["degraded"]] == ["stale-baseline"]
        assert result["coverage"]["exhaustive"] is False and result["coverage"]["ran"] == []


@pytest.mark.needs_definitions
async def test_missing_crashing_or_non_inspect_providers_are_degraded(repo: Path) -> None:
    async with host(repo, extra={}) as ctx:
        missing = await query_inspect(ctx, request("symbols", query="Money"))
        assert_valid(missing, RESULT)
        assert missing["data"]["results"] == []
        assert missing["coverage"]["degraded"][0]["reason"] == "missing"
    async with host(repo, extra={"fake-inspect": fake_inspect("crash-initialize")}) as ctx:
        crashed = await query_inspect(ctx, request("symbols", query="Money"))
        assert_valid(crashed, RESULT)
        assert crashed["coverage"]["degraded"][0]["reason"] == "crashed"
        assert crashed["data"]["results"] == []
    async with host(repo, extra={"fake-inspect": fake_inspect("clean")}) as ctx:
        unsupported = await query_inspect(ctx, request("symbols", query="Money"))
        assert_valid(unsupported, RESULT)
        assert unsupported["coverage"]["degraded"][0]["reason"] == "unsupported"


async def test_bad_outer_params_are_typed_input_errors(repo: Path) -> None:
    async with host(repo) as ctx:
        for params in (
            {"callSite": "gatekeeper", "request": {"verb": "symbols"}},
            {"callSite": "interactive", "request": {"verb": "grep"}},
            {"callSite": "interactive", "request": {"verb": "symbols", "shell": "rm"}},
            {"callSite": "interactive", "request": {"verb": "references"}},
            {"callSite": "interactive", "request": {"verb": "impact", "paths": ["../etc/passwd"]}},
            {"callSite": "interactive", "request": {"verb": "symbols"}, "extra": 1},
        ):
            with pytest.raises(AspError) as error:
                await query_inspect(ctx, params)
            assert error.value.code == -32602, params
