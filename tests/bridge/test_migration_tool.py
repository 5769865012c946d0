"""`asp_migration_check` end to end: the bridge in memory, the real reference host, a real git change,
and pyflakes run for real as the "old tool" (SARIF and ASP shapes)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from asp_protocol.canonical import blob_id
from bridge.config import BridgeSettings
from bridge.migration.legacy_names import PROTOCOL_LEGACY_NAMES
from bridge.server import create_server
from tests.support.gitrepo import git, make_repo, snapshot_tree, write_files
from tests.support.mcp_helpers import assert_labelled, bad_host_argv
from tests.support.old_tool import asp_diagnostics, run_pyflakes, sarif_log

pytestmark = pytest.mark.anyio

BEFORE = '''"""Module under migration."""
import sys


def helper():
    return sys.argv
'''
AFTER = '''"""Module under migration."""
import os
import sys

PATTERN = "\\d+"


def area(r):
    unused = 1
    return 3.14 * r * r + undefined_scale


def helper():
    """
    >>> missing_in_doctest
    """
    return sys.argv
'''
LEGACY = [
    "judge",
    "rox",
    "act",
    "act/propose",
    "cix",
    "cix:rename",
    "judge/publishDiagnostics",
    "lint",
]


@asynccontextmanager
async def bridge(repo: Path, host: list[str] | None = None) -> AsyncIterator[Client]:
    settings = BridgeSettings(repo=repo, host=host, timeout=60.0)
    server = create_server(settings)
    with anyio.fail_after(90):
        async with Client(server, mode="legacy") as client:  # type: ignore[arg-type]
            yield client


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "ws", {"pkg/__init__.py": "", "pkg/mod.py": BEFORE})
    write_files(root, {"pkg/mod.py": AFTER})
    return root


def _check(envelope: dict[str, Any]) -> dict[str, Any]:
    report = envelope["bridgeResult"]["migrationCheck"]
    assert report["replacementClaimed"] is False and report["nonAuthoritative"] is True
    return report


@pytest.mark.parametrize("shape", ["sarif", "asp"])
async def test_parity_table_on_a_real_change(repo: Path, shape: str) -> None:
    old = run_pyflakes(repo, ["pkg/mod.py"], doctests=True)
    assert "undefined name 'missing_in_doctest'" in [m.text for m in old]  # doctest mode: old-only
    findings = sarif_log(old) if shape == "sarif" else asp_diagnostics(old)
    before = snapshot_tree(repo)
    async with bridge(repo) as client:
        result = await client.call_tool(
            "asp_migration_check", {"legacy": LEGACY, "findings": findings}
        )
    assert snapshot_tree(repo) == before  # read-only
    envelope = assert_labelled(result, is_error=False)
    assert (
        envelope["hostMethod"] == "host/evaluateChangeset" and envelope["callSite"] == "interactive"
    )
    decision = envelope["hostResult"]
    assert decision["callSite"] == "interactive" and decision["decision"] in ("allow", "deny")
    assert set(envelope["bridgeResult"]["hostResults"]) == {
        "host/capabilities",
        "host/status",
        "host/workingChangeset",
    }
    report = _check(envelope)

    parity = report["parity"]
    assert parity["ran"] is True and parity["changesetSource"] == "host/workingChangeset"
    assert parity["changePaths"] == ["pkg/mod.py"] and parity["findingsFormat"] == shape
    counts = parity["result"]["counts"]
    assert (counts["old"], counts["matched"], counts["onlyOld"], counts["onlyAsp"]) == (4, 3, 1, 1)
    assert counts["parityBlockers"] == 1
    only_old = parity["result"]["onlyOld"][0]
    assert only_old["finding"]["message"] == "undefined name 'missing_in_doctest'"
    assert only_old["pathInChange"] is True and only_old["ruleKind"] == "undefined-name"
    only_asp = parity["result"]["onlyAsp"][0]
    assert (
        only_asp["finding"]["rule"] == "python/syntax-warning"
        and only_asp["finding"]["start"]["line"] == 4
    )
    kinds = sorted(m["ruleKind"] for m in parity["result"]["matched"])
    assert kinds == ["undefined-name", "unused-import", "unused-variable"]
    assert all(m["lineDelta"] == 0 for m in parity["result"]["matched"])

    rows = {row["name"]: row for row in report["coverage"]}
    assert rows["judge"]["status"] in ("served", "served-degraded")
    assert (
        rows["judge"]["providers"][0]["id"] == "asp-python-check" and rows["judge"]["gateRequires"]
    )
    assert rows["rox"]["status"] == rows["judge"]["status"]
    # the host's edit profile (asp-python-edit, pinned by the built-in default policy) serves them
    for name in ("act", "cix", "act/propose", "cix:rename"):
        assert rows[name]["status"] in ("served", "served-degraded"), rows[name]
        assert rows[name]["providers"][0]["id"] == "asp-python-edit"
    assert rows["judge/publishDiagnostics"]["status"] == "not-served"
    assert rows["lint"]["status"] == "unknown-legacy-name"

    text = getattr(result.content[0], "text", "")
    assert "replacementClaimed: false" in text and "ONLY-OLD" in text and "only-ASP" in text
    assert "<<<UNTRUSTED MIGRATION REPORT" in text


async def test_inline_changeset_with_an_old_run_before_a_line_shift(repo: Path) -> None:
    # the old tool ran on an earlier edit; the final change then inserted three lines at the top
    old = run_pyflakes(repo, ["pkg/mod.py"])
    shifted = "# one\n# two\n# three\n" + AFTER
    write_files(repo, {"pkg/mod.py": shifted})
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    changeset = {
        "baseline": {"rev": f"git:tree:{tree}"},
        "changes": [
            {
                "path": "pkg/mod.py",
                "kind": "modify",
                "before": blob_id(BEFORE.encode()),
                "after": blob_id(shifted.encode()),
            }
        ],
    }
    args = {"legacy": ["judge"], "findings": sarif_log(old), "changeset": changeset}
    async with bridge(repo) as client:
        by_name = await client.call_tool("asp_migration_check", args)
        by_position = await client.call_tool("asp_migration_check", {**args, "line_tolerance": 3})
    first = _check(assert_labelled(by_name, is_error=False))["parity"]
    assert first["ran"] and first["changesetSource"] == "inline"
    assert first["result"]["counts"]["onlyOld"] == 0 and first["result"]["counts"]["matched"] == 3
    assert {(m["method"], m["lineDelta"]) for m in first["result"]["matched"]} == {("subject", 3)}
    second = _check(assert_labelled(by_position, is_error=False))["parity"]
    assert {(m["method"], m["lineDelta"]) for m in second["result"]["matched"]} == {("position", 3)}


async def test_a_host_without_the_capability_or_the_helper(tmp_path: Path) -> None:
    findings = sarif_log([])
    async with bridge(tmp_path, host=list(bad_host_argv("ok"))) as client:
        result = await client.call_tool(
            "asp_migration_check",
            {"legacy": ["judge", "sense", "act", "rox"], "findings": findings},
        )
    envelope = assert_labelled(result, is_error=False)
    report = _check(envelope)
    assert {row["name"]: row["status"] for row in report["coverage"]} == {
        "judge": "not-served",
        "sense": "not-served",
        "act": "not-served",
        "rox": "not-served",
    }
    parity = report["parity"]
    assert parity["ran"] is False and "host/workingChangeset" in parity["reason"]
    assert "pass the change inline" in parity["reason"]
    assert envelope["hostMethod"] == "host/status"


async def test_malformed_input_is_a_labelled_refusal_naming_the_entry(repo: Path) -> None:
    findings = sarif_log(run_pyflakes(repo, ["pkg/mod.py"]))
    bad = copy.deepcopy(findings)
    bad["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    async with bridge(repo) as client:
        result = await client.call_tool(
            "asp_migration_check", {"legacy": ["judge"], "findings": bad}
        )
        broken_change = await client.call_tool(
            "asp_migration_check",
            {
                "findings": findings,
                "changeset": {"baseline": {"rev": "x"}, "changes": [{"path": "a"}]},
            },
        )
        trace = await client.call_tool("asp_debug_trace", {})
    error = assert_labelled(result, is_error=True)["error"]
    assert error["reason"] == "refused"
    assert "entry 1 (runs[0].results[1])" in error["message"]
    assert "locations[0].physicalLocation.region.startLine" in error["message"]
    change_error = assert_labelled(broken_change, is_error=True)["error"]
    assert (
        change_error["reason"] == "refused"
        and "malformed changeset: changes.0.kind" in change_error["message"]
    )
    entries = trace.structured_content["bridgeResult"]["entries"]
    assert not [
        e for e in entries if e.get("method") == "host/evaluateChangeset"
    ]  # refused before any call


async def test_a_clean_work_tree_has_nothing_to_compare(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws", {"pkg/mod.py": AFTER})
    async with bridge(root) as client:
        result = await client.call_tool(
            "asp_migration_check", {"findings": sarif_log(run_pyflakes(root, ["pkg/mod.py"]))}
        )
    report = _check(assert_labelled(result, is_error=False))
    assert report["parity"]["ran"] is False and "the change is empty" in report["parity"]["reason"]
    assert [row["name"] for row in report["coverage"]] == list(PROTOCOL_LEGACY_NAMES)


async def test_coverage_only_reads_status_and_capabilities(repo: Path) -> None:
    async with bridge(repo) as client:
        result = await client.call_tool(
            "asp_migration_check", {"legacy": ["sense/impact", "crg:wal"]}
        )
    envelope = assert_labelled(result, is_error=False)
    report = _check(envelope)
    assert report["parity"] is None and envelope["hostMethod"] == "host/status"
    assert set(envelope["bridgeResult"]["hostResults"]) == {"host/capabilities"}
    wal = next(row for row in report["coverage"] if row["name"] == "crg:wal")
    assert wal["status"] == "not-served" and wal["mapping"]["inferred"] is True


async def test_a_non_object_entry_is_named_by_the_parser(repo: Path) -> None:
    async with bridge(repo) as client:
        result = await client.call_tool("asp_migration_check", {"findings": [3]})
    error = assert_labelled(result, is_error=True)["error"]
    # the input schema says findings are objects: refused in one line naming the entry
    assert error["reason"] == "refused" and "`findings[0]` = 3" in error["message"]
