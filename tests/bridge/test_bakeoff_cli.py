"""`asp-mcp-bridge bakeoff` as a user runs it: a real process, its exit code and its two files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.mcp_helpers import bridge_cli


def bakeoff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return bridge_cli("bakeoff", *args, cwd=cwd)


@pytest.mark.slow
def test_bakeoff_command_writes_both_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = bakeoff(
        "--case",
        "missing-provider",
        "--case",
        "applied-proposal",
        "--primary-only",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "bake-off PASS" in done.stdout
    data = json.loads((out / "bakeoff.json").read_text())
    assert [c["case"] for c in data["cases"]] == ["missing-provider", "applied-proposal"]
    assert data["cases"][0]["status"] == "compared"
    assert data["cases"][1]["status"] == "compared"  # the reference host has the edit profile
    assert data["variants"] == []  # --primary-only
    assert data["repeat"] == 1
    assert (out / "bakeoff.md").read_text().startswith("# ASP binding bake-off")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--case", "no-such-case"), "unknown bake-off case"),
        (("--repeat", "0"), "--repeat must be at least 1"),
    ],
)
def test_bakeoff_usage_errors_exit_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    done = bakeoff(*args, "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_host_that_cannot_start_fails_the_bakeoff(tmp_path: Path) -> None:
    done = bakeoff(
        "--case",
        "allow",
        "--primary-only",
        "--host",
        str(tmp_path / "no-such-host"),
        "--out",
        str(tmp_path / "o"),
        cwd=tmp_path,
    )
    assert done.returncode == 1
    data = json.loads((tmp_path / "o" / "bakeoff.json").read_text())
    assert data["verdict"] == "fail"
    assert data["cases"][0]["status"] == "failed"
