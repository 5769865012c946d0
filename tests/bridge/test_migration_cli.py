"""`asp-mcp-bridge migration-check` as a real subprocess against the real reference host."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.gitrepo import make_repo, write_files
from tests.support.mcp_helpers import bridge_cli
from tests.support.old_tool import run_pyflakes, sarif_log

BEFORE = "import sys\n\n\ndef main():\n    return sys.argv\n"
AFTER = "import os\nimport sys\n\n\ndef main():\n    return sys.argv + missing\n"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return bridge_cli("migration-check", *args, cwd=cwd)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "ws", {"app.py": BEFORE})
    write_files(root, {"app.py": AFTER})
    return root


@pytest.fixture
def findings(repo: Path, tmp_path: Path) -> Path:
    path = tmp_path / "pyflakes.sarif.json"
    path.write_text(json.dumps(sarif_log(run_pyflakes(repo, ["app.py"]))), encoding="utf-8")
    return path


def test_text_report(repo: Path, findings: Path) -> None:
    done = _cli(
        "--legacy",
        "judge",
        "act",
        "crg:wal",
        "--findings",
        str(findings),
        "--repo",
        str(repo),
        cwd=repo,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("NON-AUTHORITATIVE: asp_migration_check result")
    assert "NON-AUTHORITATIVE ASP migration check (replacementClaimed: false)" in out
    assert "old 2  asp 2  matched 2  only-old 0 (parity blockers)  only-ASP 0" in out
    # act is served by the host's edit profile; crg:wal has no outer method at all
    assert "not-served" in out and "Replacement claimed: no." in out


def test_json_output_is_the_labelled_envelope(repo: Path, findings: Path) -> None:
    done = _cli(
        "--legacy", "rox", "--findings", str(findings), "--repo", str(repo), "--json", cwd=repo
    )
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["nonAuthoritative"] is True and envelope["authority"]["gateSatisfied"] is False
    report = envelope["bridgeResult"]["migrationCheck"]
    assert report["replacementClaimed"] is False
    assert report["parity"]["result"]["counts"]["matched"] == 2
    assert report["coverage"][0]["name"] == "rox"


def test_bad_findings_file_names_the_entry(repo: Path, findings: Path, tmp_path: Path) -> None:
    data = json.loads(findings.read_text(encoding="utf-8"))
    del data["runs"][0]["results"][1]["ruleId"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    done = _cli("--legacy", "judge", "--findings", str(bad), "--repo", str(repo), cwd=repo)
    assert done.returncode == 2 and done.stdout == ""
    assert "entry 1 (runs[0].results[1])" in done.stderr and "field 'ruleId'" in done.stderr
    missing = _cli("--findings", str(tmp_path / "nope.json"), "--repo", str(repo), cwd=repo)
    assert missing.returncode == 2 and "nope.json" in missing.stderr
