"""Resources `asp://host/*` and the prompts, over the SDK client in both protocol eras, against a real
host process (the scripted `ok` host: fast, and its answers are known)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bridge.config import BridgeSettings
from bridge.server import create_server
from tests.support.mcp_helpers import LABEL_KEY, bad_host_argv

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]


def _settings(tmp_path: Path, *mode: str) -> BridgeSettings:
    return BridgeSettings(
        repo=tmp_path, host=list(bad_host_argv(*mode)), timeout=10.0, backoff_initial=0.01
    )


@pytest.mark.parametrize("mode", MODES)
async def test_host_resources_carry_the_labelled_envelope(tmp_path: Path, mode: str) -> None:
    async with Client(create_server(_settings(tmp_path, "ok")), mode=mode) as client:  # type: ignore[arg-type]
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(listed) == {"asp://host/status", "asp://host/capabilities"}
        for uri, method in (
            ("asp://host/status", "host/status"),
            ("asp://host/capabilities", "host/capabilities"),
        ):
            assert listed[uri].mime_type == "application/json"
            assert (listed[uri].meta or {})[LABEL_KEY]["nonAuthoritative"] is True
            read = await client.read_resource(uri)
            (content,) = read.contents
            envelope: dict[str, Any] = json.loads(content.text)  # type: ignore[union-attr]
            assert envelope["nonAuthoritative"] is True
            assert envelope["authority"]["gateSatisfied"] is False
            assert envelope["hostMethod"] == method
            assert isinstance(envelope["hostResult"], dict) and envelope["error"] is None
            if mode == "auto":  # the 2026-07-28 era carries the short cache hint
                assert read.ttl_ms == 5000 and read.cache_scope == "private"


@pytest.mark.parametrize("mode", MODES)
async def test_resource_read_of_a_failing_host_is_a_labelled_error(
    tmp_path: Path, mode: str
) -> None:
    async with Client(create_server(_settings(tmp_path, "crash-mid-call")), mode=mode) as client:  # type: ignore[arg-type]
        read = await client.read_resource("asp://host/status")
        envelope = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        assert envelope["nonAuthoritative"] is True and envelope["hostResult"] is None
        assert envelope["error"]["reason"] == "host-unavailable"


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_name_the_tools_and_the_contract(tmp_path: Path, mode: str) -> None:
    async with Client(create_server(_settings(tmp_path, "ok")), mode=mode) as client:  # type: ignore[arg-type]
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {
            "asp_status_brief",
            "asp_migration_check",
            "asp_binding_experiment",
        }
        required = {a.name for a in prompts["asp_migration_check"].arguments or [] if a.required}
        assert required == {"old_tool"}

        brief = await client.get_prompt("asp_status_brief", {})
        text = brief.messages[0].content.text  # type: ignore[union-attr]
        assert "asp_status" in text and "NON-AUTHORITATIVE" in text

        check = await client.get_prompt(
            "asp_migration_check", {"old_tool": "ruff", "legacy_names": "judge crg"}
        )
        text = check.messages[0].content.text  # type: ignore[union-attr]
        assert "--output-format sarif" in text and "asp_migration_check" in text
        assert '"legacy": ["judge", "crg"]' in text and "only-old" in text

        experiment = await client.get_prompt("asp_binding_experiment", {"cases": "allow timeout"})
        text = experiment.messages[0].content.text  # type: ignore[union-attr]
        assert (
            'asp-mcp-bridge bakeoff --out /tmp/asp-bakeoff --case "allow" --case "timeout"' in text
        )
        assert "never report it as passed" in text


async def test_prompt_arguments_are_quoted_and_capped(tmp_path: Path) -> None:
    hostile = "ruff`; rm -rf ~ #\n" + "x" * 1000
    async with Client(create_server(_settings(tmp_path, "ok")), mode="legacy") as client:  # type: ignore[arg-type]
        text = (
            (await client.get_prompt("asp_migration_check", {"old_tool": hostile}))
            .messages[0]
            .content.text
        )  # type: ignore[union-attr]
    quoted = json.dumps(hostile.strip()[:300])
    assert quoted in text and "x" * 301 not in text and "\nx" not in text
