"""The command-line settings of a provider that builds the index in the background (inspect,
edit): they are settings of its trusted manifest, one spelling for both providers."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from reference_host.providers.pyindex.diskcache import DEFAULT_MAX_BYTES as DEFAULT_CACHE_BYTES

DEFAULT_WAIT_S = 3.0  # how long a request waits for a running build before answering


@dataclass(frozen=True)
class BuildOptions:
    wait: float
    hold_requests: int
    cache_dir: Path | None
    cache_max_bytes: int


def build_parser(prog: str) -> argparse.ArgumentParser:
    """A parser with the build options; a provider adds its own."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument(
        "--index-wait-ms",
        type=int,
        default=int(DEFAULT_WAIT_S * 1000),
        help="how long a request waits for a running index build before saying it is indexing",
    )
    parser.add_argument(
        "--hold-build-requests",
        type=int,
        default=0,
        help="test only: the build starts after this many requests asked for it",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="persistent facts cache outside the workspace (the host's choice; none: no cache)",
    )
    parser.add_argument(
        "--cache-max-mb",
        type=int,
        default=DEFAULT_CACHE_BYTES // (1024 * 1024),
        help="bound of the persistent facts cache, MiB",
    )
    return parser


def build_options(args: argparse.Namespace) -> BuildOptions:
    return BuildOptions(
        wait=max(0, args.index_wait_ms) / 1000,
        hold_requests=args.hold_build_requests,
        cache_dir=args.cache_dir,
        cache_max_bytes=max(1, args.cache_max_mb) * 1024 * 1024,
    )
