"""`asp-mcp-bridge bakeoff [--host "CMD ARGS"] [--out DIR] [--repeat N] [--case NAME]...
[--jobs N] [--primary-only]`.

Exit 0 when every must-hold property held in every case it was judged in, 1 when one did not,
2 on a usage error. Cases the host cannot serve are reported not-run, never passed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio

from bridge.ext.bakeoff import plan


def add_parser(commands: Any) -> None:
    """Register the `bakeoff` subcommand on the CLI's subparsers object."""
    parser = commands.add_parser(
        "bakeoff",
        help="run the ADR 0025 cases natively and through the MCP extension, and compare them",
    )
    parser.add_argument(
        "--host",
        default=plan.DEFAULT_HOST,
        help='host command, split like a shell; "{repo}"/"{trusted_dir}" are substituted, else '
        "`serve --repo {repo} --trusted-dir {trusted_dir}` is appended (default: this "
        "installation's reference host)",
    )
    parser.add_argument("--out", type=Path, default=Path("bakeoff-out"), help="output directory")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case and binding (>= 1)")
    parser.add_argument(
        "--case", action="append", dest="cases", help="run only this case (repeatable)"
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="per-request deadline in seconds"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="cases run at once (default 1: latency figures without contention)",
    )
    parser.add_argument(
        "--primary-only",
        action="store_true",
        help="MCP over the 2025-11-25 era and stdio only (skip the other era/transport variants)",
    )


def run(args: argparse.Namespace) -> int:
    from bridge.ext.bakeoff import cases as case_list
    from bridge.ext.bakeoff.runner import run_bakeoff

    if args.repeat < 1:
        print("asp-mcp-bridge bakeoff: --repeat must be at least 1", file=sys.stderr)
        return 2
    try:
        selected = case_list.select(args.cases)
    except ValueError as exc:
        print(f"asp-mcp-bridge bakeoff: {exc}", file=sys.stderr)
        return 2
    report, json_path, md_path = anyio.run(
        lambda: run_bakeoff(
            selected,
            host=args.host,
            out_dir=args.out,
            repeat=args.repeat,
            timeout=args.timeout,
            jobs=args.jobs,
            all_variants=not args.primary_only,
        )
    )
    counts = report["counts"]
    print(
        f"bake-off {report['verdict'].upper()}: {counts['compared']} compared, "
        f"{counts['notRun']} not run, {counts['failed']} failed; "
        f"p50 native {report['bindings']['native']['p50Ms']} ms, "
        f"mcp-extension {report['bindings']['mcp-extension']['p50Ms']} ms"
    )
    print(f"wrote {json_path} and {md_path}")
    for failure in report["failures"]:
        print(
            f"  FAILED {failure['case']}: {failure['property']} {failure['note']}", file=sys.stderr
        )
    return 0 if report["verdict"] == "pass" else 1
