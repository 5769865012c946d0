"""Configuration sources, host command resolution, `client-config` and `call` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.config import BridgeSettings, ConfigError, load_settings, resolve_host_argv
from tests.support.mcp_helpers import REPO_ROOT, bad_host_command, bridge_cli


def test_default_config_file_matches_the_defaults() -> None:
    path = REPO_ROOT / "config" / "bridge.json"
    from_file = load_settings(config_file=path, environ={})
    assert from_file == BridgeSettings()
    listed = {key for key in json.loads(path.read_text()) if not key.startswith("$")}
    assert listed == set(BridgeSettings.model_fields), "config/bridge.json must list every setting"


def test_precedence_file_env_flags(tmp_path: Path) -> None:
    config = tmp_path / "bridge.json"
    config.write_text(json.dumps({"timeout": 5, "trace_size": 7, "log_level": "info"}))
    settings = load_settings(
        config_file=config,
        environ={"ASP_BRIDGE_TIMEOUT": "9", "ASP_BRIDGE_PORT": "9001", "OTHER": "x"},
        overrides={"timeout": 11.5, "host": None},
    )
    assert (settings.timeout, settings.trace_size, settings.port, settings.log_level) == (
        11.5,
        7,
        9001,
        "INFO",
    )


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"file": {"timeout": 1, "tiemout": 2}}, "'tiemout'"),
        ({"environ": {"ASP_BRIDGE_HOSTT": "x"}}, "'ASP_BRIDGE_HOSTT'"),
        ({"overrides": {"verbose": True}}, "'verbose'"),
        ({"file": {"timeout": -1}}, "'timeout'"),
        ({"file": {"transport": "carrier-pigeon"}}, "'transport'"),
    ],
)
def test_bad_keys_are_errors_naming_the_key(tmp_path: Path, kwargs: dict, fragment: str) -> None:
    config = None
    if "file" in kwargs:
        config = tmp_path / "c.json"
        config.write_text(json.dumps(kwargs["file"]))
    with pytest.raises(ConfigError) as failure:
        load_settings(
            config_file=config, environ=kwargs.get("environ", {}), overrides=kwargs.get("overrides")
        )
    assert fragment in str(failure.value)


def test_host_command_resolution(tmp_path: Path) -> None:
    repo = tmp_path.resolve()
    assert resolve_host_argv("my-host --flag 'two words'", repo) == (
        "my-host",
        "--flag",
        "two words",
        "serve",
        "--repo",
        str(repo),
    )
    assert resolve_host_argv(["h", "run", "--root={repo}"], repo) == ("h", "run", f"--root={repo}")
    default = resolve_host_argv(None, repo)
    assert default == (sys.executable, "-m", "reference_host", "serve", "--repo", str(repo))
    with pytest.raises(ConfigError):
        resolve_host_argv("", repo)


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return bridge_cli(*args, cwd=cwd, timeout=60)


@pytest.mark.parametrize(
    ("client", "top"),
    [
        ("claude-code", "mcpServers"),
        ("claude-desktop", "mcpServers"),
        ("cursor", "mcpServers"),
        ("vscode", "servers"),
    ],
)
def test_client_config_is_ready_to_paste(tmp_path: Path, client: str, top: str) -> None:
    done = _cli("client-config", "--client", client, "--repo", str(tmp_path), "--timeout", "30")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)[top]["asp"]
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    args = entry["args"]
    assert args[args.index("--repo") + 1] == str(tmp_path.resolve())
    assert args[args.index("--timeout") + 1] == "30.0"
    if client in ("vscode", "cursor", "claude-code"):
        assert json.loads(done.stdout)[top]["asp"]["type"] == "stdio"
        # the advice names a place outside the repository first, and what one inside it costs
        where = done.stderr.split("put this in ", 1)[1]
        assert not where.startswith("<repo>") and ".git/info/exclude" in done.stderr


def test_call_prints_labelled_text_and_json(tmp_path: Path) -> None:
    host = bad_host_command("ok")
    done = _cli("call", "asp_authority_status", "--repo", str(tmp_path), "--host", host)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("NON-AUTHORITATIVE")
    done = _cli(
        "call", "asp_status", "--repo", str(tmp_path), "--host", host, "--json", "--mode", "auto"
    )
    result = json.loads(done.stdout)
    assert result["structuredContent"]["nonAuthoritative"] is True
    assert result["_meta"]["dev.asp-mcp-bridge/asp-outer-seam"]["gateSatisfied"] is False


def test_call_error_exit_code_and_bad_input(tmp_path: Path) -> None:
    done = _cli(
        "call", "asp_status", "--repo", str(tmp_path), "--host", bad_host_command("crash-mid-call")
    )
    assert done.returncode == 1
    assert "reason=host-unavailable" in done.stdout
    done = _cli("call", "asp_status", "--repo", str(tmp_path / "missing"))
    assert done.returncode == 2 and "not a directory" in done.stderr
    done = _cli("call", "asp_status", "--repo", str(tmp_path), "--args", "[1]")
    assert done.returncode == 2 and "JSON object" in done.stderr


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("client", "top"), [("claude-desktop", "mcpServers"), ("vscode", "servers")]
)
async def test_a_client_configured_from_client_config_gets_labelled_tools(
    tmp_path: Path, client: str, top: str
) -> None:
    """What a user pastes is what a client launches: the five tools answer, labelled."""
    from mcp import Client, StdioServerParameters

    from tests.support.gitrepo import make_repo
    from tests.support.mcp_helpers import assert_labelled

    repo = make_repo(tmp_path / "repo", {"app.py": "print('hi')\n"})
    done = _cli("client-config", "--client", client, "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)[top]["asp"]
    server = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=entry.get("env")
    )
    async with Client(server, mode="legacy", read_timeout_seconds=60) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {
            "asp_status",
            "asp_capabilities",
            "asp_authority_status",
            "asp_debug_host",
            "asp_debug_trace",
        } <= tools
        envelope = assert_labelled(await session.call_tool("asp_status", {}), is_error=False)
    assert envelope["hostResult"]["workspace"]["root"] == str(repo.resolve())


def test_serve_loads_only_its_own_subcommand_and_no_refusal_helpers() -> None:
    """A bridge start pays for the SDK, not for `bakeoff`, `migration-check` or jsonschema (used
    only to explain a refused call); `--help` still lists every subcommand."""
    probe = (
        "import sys\n"
        "from bridge.commands import build_parser\n"
        "import bridge.commands.serve as serve\n"
        "build_parser('serve').parse_args(['serve', '--repo', '.'])\n"
        "serve.load_sdk()\n"
        "print(sorted(m for m in sys.modules if m.startswith("
        "('bridge.commands.', 'bridge.ext.bakeoff', 'jsonschema'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['bridge.commands.common',", "'bridge.commands.serve']"]
    usage = subprocess.run(
        [sys.executable, "-m", "bridge", "--help"], capture_output=True, text=True, check=True
    )
    for name in ("serve", "call", "client-config", "bakeoff", "migration-check"):
        assert name in usage.stdout


def test_a_started_bridge_has_not_loaded_the_migration_check_or_the_plan_diff() -> None:
    """Every tool is registered (its signature and output schema), but the code behind the
    migration check and the edit plan's diff loads with their first call, not with a start."""
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "import bridge.commands.serve as serve\n"
        "from bridge.config import BridgeSettings\n"
        "serve.load_sdk()\n"
        "server = serve.build_server(BridgeSettings(repo=Path('.')), True)\n"
        "names = {tool.name for tool in server._tool_manager.list_tools()}\n"
        "assert {'asp_migration_check', 'asp_ext_request_edit_plan'} <= names, names\n"
        "print(sorted(m for m in sys.modules if m.startswith("
        "('bridge.migration', 'bridge.ext.plan_diff', 'difflib'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]"]
