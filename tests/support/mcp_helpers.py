"""Shared helpers for host-client and bridge tests: bad-host argv, settings, the bridge CLI as a
process and label checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from host_client import HostClientSettings

BAD_HOST = Path(__file__).resolve().parent / "bad_host.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
LABEL_KEY = "dev.asp-mcp-bridge/asp-outer-seam"


def bad_host_argv(*mode: str) -> tuple[str, ...]:
    """The argv of the misbehaving host in *mode* (run by file path: its cwd is the workspace)."""
    return (sys.executable, str(BAD_HOST), *mode)


def bad_host_command(*mode: str) -> str:
    """The same host as one `--host` command line for the bridge CLI."""
    import shlex

    return shlex.join(bad_host_argv(*mode))


def bridge_cli(
    *args: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m bridge ARGS` as a user runs it, in *cwd*: exit code, stdout and stderr as text."""
    return subprocess.run(
        [sys.executable, "-m", "bridge", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def settings_for(cwd: Path, *mode: str, **overrides: Any) -> HostClientSettings:
    values: dict[str, Any] = {"timeout": 10.0, "backoff_initial": 0.01, "backoff_max": 0.05}
    values.update(overrides)
    return HostClientSettings(argv=bad_host_argv(*mode), cwd=cwd, **values)


def assert_labelled(
    result: Any, *, is_error: bool | None = None, binding: str = "mcp-tool"
) -> dict[str, Any]:
    """Check the one label on an MCP CallToolResult (structured content, `_meta`, text); return the envelope."""
    if is_error is not None:
        assert bool(result.is_error) is is_error, result
    envelope = result.structured_content
    assert isinstance(envelope, dict), result
    assert envelope["nonAuthoritative"] is True
    authority = envelope["authority"]
    assert authority["authoritative"] is False
    assert authority["gateSatisfied"] is False
    assert authority["binding"] == binding
    assert isinstance(authority["basis"], str) and authority["basis"]
    meta = result.meta or {}
    assert meta[LABEL_KEY]["nonAuthoritative"] is True
    assert meta[LABEL_KEY]["gateSatisfied"] is False
    assert result.content, "a labelled result always has text content"
    assert result.content[0].type == "text"
    assert result.content[0].text.startswith("NON-AUTHORITATIVE")
    return envelope
