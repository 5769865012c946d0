"""What every subcommand shares: the common options, the settings they make, the repository check."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bridge.config import BridgeSettings, ConfigError, load_settings


def add_common(parser: argparse.ArgumentParser, *, repo_required: bool = False) -> None:
    """--repo, --host, --timeout and --config, as every bridge-running subcommand takes them."""
    parser.add_argument(
        "--repo",
        type=Path,
        required=repo_required,
        help="workspace the host serves (default: the `repo` setting from --config or "
        "ASP_BRIDGE_REPO, else the current directory)",
    )
    parser.add_argument(
        "--host",
        help='whole host command line, split like a shell; "{repo}" becomes the absolute workspace, '
        "else `serve --repo <workspace>` is appended (default: this installation's reference host)",
    )
    parser.add_argument(
        "--timeout", type=float, help="deadline of one tool call in seconds (default 50)"
    )
    parser.add_argument("--config", type=Path, help="JSON config file (see config/bridge.json)")


def settings_of(args: argparse.Namespace, **extra: Any) -> BridgeSettings:
    """The bridge settings: config file, then the command line (raises ConfigError)."""
    overrides = {"repo": args.repo, "host": args.host, "timeout": args.timeout, **extra}
    return load_settings(config_file=args.config, overrides=overrides)


def check_repo(path: Path | None) -> Path:
    """The workspace as an absolute directory (raises ConfigError)."""
    repo = (path or Path.cwd()).resolve()
    if not repo.is_dir():
        raise ConfigError(f"--repo {path}: not a directory")
    return repo


def passthrough(args: argparse.Namespace, repo: Path) -> list[str]:
    """`serve` arguments that reproduce this invocation's settings in a spawned bridge."""
    argv = ["serve", "--repo", str(repo)]
    if args.host is not None:
        argv += ["--host", args.host]
    if args.timeout is not None:
        argv += ["--timeout", repr(args.timeout)]
    if args.config is not None:
        argv += ["--config", str(args.config.resolve())]
    return argv
