"""Launch shim for provider processes: apply the grant's OS limits, then exec the provider.

Run as `python -I -S confine.py --as-mb N --nofile N --cpu-s N --parent PID -- ARGV...`. It sets resource
limits (address space, open files, CPU seconds) and, on Linux, asks the kernel to SIGKILL it when
its parent (the host) dies, then replaces itself with ARGV (same pid, limits inherited). It is a
separate script rather than a `preexec_fn` because the host is threaded and anyio's process API
takes no pre-exec hook; it imports only the standard library, so it starts in milliseconds.

What this cannot do — a read-only filesystem, no network — stays declared, not enforced
(the README's "Security model" says so).
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import sys

TYPE_CHECKING = False  # not typing's: importing typing (and signal, enum) would slow every launch
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, NoReturn

PR_SET_PDEATHSIG = 1
SIGKILL = 9  # Linux (the only platform where the parent-death signal is set)
CPU_SECONDS = 3600  # per provider process (a warm session serves many requests)
ENFORCED = (
    "enforced by the OS: address space (memoryMb), open files (fd), CPU time "
    f"({CPU_SECONDS} s per process), own process group, killed with the host"
)
DECLARED = (
    "declared, not enforced: read-only filesystem, no network (isolation is advisory); a "
    "`user-cache:` write is a provider's own cache outside the workspace"
)


def confined_argv(argv: list[str], limits: dict[str, int]) -> list[str]:
    """*argv* launched through this shim with the grant's memory and fd limits (see module doc)."""
    return [
        sys.executable,
        "-I",
        "-S",
        __file__,
        "--as-mb",
        str(limits["memoryMb"]),
        "--nofile",
        str(limits["fd"]),
        "--cpu-s",
        str(CPU_SECONDS),
        "--parent",
        str(os.getpid()),
        "--",
        *argv,
    ]


async def launch(
    argv: list[str], limits: dict[str, int], cwd: Path | None, env: dict[str, str]
) -> Any:
    """Start *argv* confined, with pipes, in its own session; OSError when it cannot start (a
    missing program is checked here, since the shim itself would start)."""
    # Imported here, not at the top: the script runs without site-packages, and starts faster.
    import shutil
    import subprocess

    import anyio

    if shutil.which(argv[0]) is None:
        raise FileNotFoundError(errno.ENOENT, f"{argv[0]!r} not found")
    return await anyio.open_process(
        confined_argv(argv, limits),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(cwd) if cwd else None,
        env=env,
        start_new_session=True,
    )


async def end(process: Any, known: list[tuple[int, int]]) -> None:
    """SIGKILL a process `launch` started, with its group and every descendant that left the group
    (*known*, walked before it was asked to exit, and what is under it now if it still runs: once
    it has exited they can no longer be found; asp_protocol/proctree.py), then close its pipes."""
    import contextlib

    import anyio

    from asp_protocol.proctree import descendants, end_tree

    with anyio.CancelScope(shield=True):
        alive = process.returncode is None
        end_tree(process.pid, [*known, *(descendants(process.pid) if alive else [])])
        with anyio.move_on_after(2):
            await process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    await stream.aclose()
        _release_pipes(process)


def _release_pipes(process: Any) -> None:
    """Close the event loop's transport behind a killed and waited *process*.

    Closing anyio's streams does not close it, and a pipe stays open while anything else holds its
    other end: a provider's child that escaped its group, or a worker still busy when the provider
    exited. Such a transport would be closed only when collected, after the loop has ended, and
    print "Event loop is closed" as the host exits.
    """
    inner = getattr(process, "_process", None)  # anyio's asyncio backend: asyncio's Process
    transport = getattr(inner, "_transport", None)
    if transport is not None:
        transport.close()


def _limit(kind: int, value: int) -> None:
    """Lower soft and hard limit to *value* (never raise one the host itself runs under)."""
    _, hard = resource.getrlimit(kind)
    cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (cap, cap))


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL when the parent exits; if it already did (we were reparented), exit now."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os._exit(70)


def main(argv: list[str]) -> None:
    """`--as-mb N --nofile N --cpu-s N --parent PID -- ARGV...` (parsed by hand: no argparse, so
    the shim adds as little as possible to every provider launch)."""
    options: dict[str, int] = {}
    rest = list(argv)
    while rest and rest[0] != "--":
        if len(rest) < 2 or rest[0] not in ("--as-mb", "--nofile", "--cpu-s", "--parent"):
            _fail(f"bad arguments {rest[:2]!r}", 64)
        options[rest[0]] = int(rest[1])
        rest = rest[2:]
    command = rest[1:]
    if len(options) != 4 or not command:
        _fail("usage: confine.py --as-mb N --nofile N --cpu-s N --parent PID -- ARGV...", 64)
    _limit(resource.RLIMIT_AS, options["--as-mb"] * 1024 * 1024)
    _limit(resource.RLIMIT_NOFILE, options["--nofile"])
    _limit(resource.RLIMIT_CPU, options["--cpu-s"])
    _die_with_parent(options["--parent"])
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        _fail(f"cannot run {command[0]!r}: {exc.strerror}", 127)


def _fail(message: str, code: int) -> NoReturn:
    sys.stderr.write(f"confine: {message}\n")
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
