"""The bridge as the TypeScript MCP SDK client sees it (the client Claude Code, Cursor, VS Code and
MCP Inspector are built on).

That client validates every `structuredContent` against the tool's `outputSchema` with AJV and
throws on a mismatch, so this test runs `clients/ts-sdk/check.mjs` against a real bridge on a real
repository: AJV strict-mode compile of every schema, every listed tool called once, the headline,
untrusted marking and size bound read from structured content only. It needs Node.js and
`npm ci --prefix clients/ts-sdk` (network at install time, never during the test); without them
it is skipped with that reason.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gitrepo import make_repo, snapshot_tree, write_files

CHECK_DIR = Path(__file__).resolve().parents[2] / "clients" / "ts-sdk"
NODE = shutil.which("node")
BRIDGE = Path(sys.executable).with_name("asp-mcp-bridge")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        NODE is None or not (CHECK_DIR / "node_modules" / "@modelcontextprotocol").is_dir(),
        reason="needs Node.js and `npm ci --prefix clients/ts-sdk`",
    ),
]


def test_every_tool_passes_the_typescript_clients_validation(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "import os\n\n\ndef f(x):\n    return x\n"})
    write_files(repo, {"a.py": "import os\n\n\ndef f(x):\n    return y\n"})
    before = snapshot_tree(repo)
    assert NODE is not None
    run = subprocess.run(
        [NODE, "check.mjs", str(BRIDGE), str(repo)],
        cwd=CHECK_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(run.stdout)
    assert run.returncode == 0, report
    assert report["failures"] == [] and report["schemaWarnings"] == []
    assert {"asp_status", "asp_inspect", "asp_migration_check"} <= set(report["tools"])
    assert [call["tool"] for call in report["calls"]] == report["tools"], "every tool was called"
    assert all(call["size"] <= 100_000 for call in report["calls"])
    assert snapshot_tree(repo) == before, "the bridge never writes the workspace"
