"""A provider answering in the recorded asp/0.1 dialect, behind the real host, through the bridge.

A real MCP client session (`Client(server)`) reaches the real reference host, which runs
`asp-fake-provider --protocol asp/0.1` enrolled by a trusted manifest, a pinned policy and a
trusted `provider-settings.json`. The host's decisions come back labelled and verbatim: allow for a
clean change, deny with the blocking finding for a bad one, and the note that the answer was mapped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from asp_protocol.canonical import blob_id, request_digest
from bridge.config import BridgeSettings
from tests.bridge.test_ext_memory import assert_envelope
from tests.support.definitions import assert_valid
from tests.support.ext_bridge import extension_server, send
from tests.support.host_harness import host_argv
from tests.support.host_scenarios import DEFAULT_FILES, REQ, one_provider, prepare
from tests.support.mcp_helpers import assert_labelled

pytestmark = pytest.mark.anyio
EDITED = "def add(a, b):\n    return a + b + 0\n"


@asynccontextmanager
async def bridge(tmp_path: Path, behavior: str) -> AsyncIterator[tuple[Client, dict[str, Any]]]:
    config = one_provider(
        behavior,
        id=f"legacy-{behavior}",
        protocol="asp/0.1",
        manifest_protocols=("asp/0.1",),
        settings=(("checks", ("fake.lines",)),),
    )
    repo, trusted, _ = prepare(tmp_path, config)
    (repo / "src/app.py").write_text(EDITED)
    host = host_argv(Path("{repo}"), trusted, None)
    server, _ = extension_server(BridgeSettings(repo=repo, host=host, timeout=30))
    async with Client(server, mode="auto") as client:  # type: ignore[arg-type]
        status = assert_envelope(await send(client, "asp/host/status"), "host/status", None)
        change = {
            "path": "src/app.py",
            "kind": "modify",
            "before": blob_id(DEFAULT_FILES["src/app.py"].encode()),
            "after": blob_id(EDITED.encode()),
        }
        baseline = status["workspace"]["baseline"]
        yield client, {"baseline": {"rev": baseline["rev"]}, "changes": [change]}


async def _evaluate(client: Client, changeset: dict[str, Any], call_site: str) -> dict[str, Any]:
    params = {"callSite": call_site, "changeset": changeset}
    envelope = await send(client, "asp/host/evaluateChangeset", params)
    result = assert_envelope(envelope, "host/evaluateChangeset", call_site)
    assert_valid(result, "outer-host.schema.json#/$defs/evaluateChangesetResult")
    assert result["requestDigest"] == request_digest("host/evaluateChangeset", params)
    return result


@pytest.mark.needs_definitions
async def test_clean_change_allowed_through_the_bridge_and_marked_mapped(tmp_path: Path) -> None:
    async with bridge(tmp_path, "clean") as (client, changeset):
        result = await _evaluate(client, changeset, "gate")
        assert result["decision"] == "allow", result["coverage"]
        assert result["coverage"]["ran"] == [REQ]
        assert [e["authority"]["granted"] for e in result["authorityEvidence"]] == [True]
        assert "mapped to v1 by the host's compatibility profile" in result["assurance"]["detail"]
        assert "checks fake.lines" in result["receipt"]["assurance"]["detail"]
        status = assert_labelled(await client.call_tool("asp_status", {}))["hostResult"]
        detail = next(s for s in status["servers"] if s["id"] == "legacy-clean")["detail"]
        assert "negotiated asp/0.1" in detail


@pytest.mark.needs_definitions
async def test_bad_change_denied_through_the_bridge_with_its_finding(tmp_path: Path) -> None:
    async with bridge(tmp_path, "finding") as (client, changeset):
        result = await _evaluate(client, changeset, "interactive")
        assert result["decision"] == "deny", result["coverage"]
        gating = [f for f in result["findings"] if f["disposition"] == "gating"]
        assert [f["diagnostic"]["code"] for f in gating] == ["legacy-finding/fake.lines/E1"]
        assert gating[0]["diagnostic"]["location"]["range"]["start"] == {"line": 0, "char": 0}
