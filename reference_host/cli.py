"""`asp-host serve --repo PATH [--trusted-dir DIR] [--assurance advisory|gated]`.

Speaks the ASP outer seam on stdin/stdout (JSON-RPC NDJSON), logs to stderr only, and exits
cleanly when stdin closes, shutting every provider down first.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

import anyio

from asp_protocol.framing import stdio_byte_streams
from reference_host.context import HostContext
from reference_host.repo.workspace import Workspace
from reference_host.server import build_endpoint
from reference_host.sessions.supervisor import Supervisor
from reference_host.trust.manifests import discover

TRUSTED_DIR_ENV = "ASP_HOST_TRUSTED_DIR"
log = logging.getLogger("reference_host")


def build_context(repo: Path, trusted_dir: Path | None, assurance: str) -> HostContext:
    """Everything the host needs, from trusted launch arguments only (never from the repository)."""
    workspace = Workspace(repo)
    providers = discover(trusted_dir, workspace.root)
    supervisor = Supervisor(providers, str(workspace.root), assurance)
    return HostContext(workspace, providers, supervisor, assurance, trusted_dir)


async def serve(ctx: HostContext) -> None:
    receive, send = stdio_byte_streams()
    endpoint = build_endpoint(ctx, receive, send)
    async with anyio.create_task_group() as tg:
        ctx.supervisor.attach(tg)
        try:
            await endpoint.serve()
        finally:
            with anyio.CancelScope(shield=True):
                await ctx.supervisor.shutdown_all()
            tg.cancel_scope.cancel()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asp-host", description="Reference ASP host (Core profile)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="serve the ASP outer seam over stdio")
    run.add_argument("--repo", required=True, type=Path, help="workspace root")
    run.add_argument(
        "--trusted-dir",
        type=Path,
        default=None,
        help=f"trusted provider manifests DIR/<id>/asp-server.json (env {TRUSTED_DIR_ENV})",
    )
    run.add_argument(
        "--assurance",
        choices=("advisory", "gated"),
        default="advisory",
        help="gated only when this host runs as the commit/CI boundary",
    )
    run.add_argument("--log-level", default=os.environ.get("ASP_HOST_LOG_LEVEL", "WARNING"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s asp-host %(levelname)s %(name)s: %(message)s",
    )
    if not args.repo.is_dir():
        print(f"asp-host: --repo {args.repo} is not a directory", file=sys.stderr)
        return 2
    trusted = args.trusted_dir or (
        Path(os.environ[TRUSTED_DIR_ENV]) if os.environ.get(TRUSTED_DIR_ENV) else None
    )
    ctx = build_context(args.repo, trusted.resolve() if trusted else None, args.assurance)
    log.info(
        "serving %s (trusted dir %s, assurance %s, %d provider manifest(s))",
        ctx.workspace.root,
        trusted,
        args.assurance,
        len(ctx.providers),
    )
    try:
        anyio.run(serve, ctx)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
