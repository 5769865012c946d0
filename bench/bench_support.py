"""What the benchmark scripts share. bench/ is not a package: each script runs by path
(`python bench/NAME.py`), so this module is imported from beside it."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import anyio
from anyio.abc import Process


async def stop_process(process: Process, grace_s: float) -> None:
    """End a child that serves on its stdin: close stdin (its end of input), wait up to *grace_s*
    for it to exit, then kill it."""
    assert process.stdin is not None
    await process.stdin.aclose()
    with anyio.move_on_after(grace_s):
        await process.wait()
    if process.returncode is None:
        process.kill()


def machine() -> str:
    """The machine line of a benchmark's report: cores, load, and which CPython ran it. The
    interpreter's build moves the figures by about a fifth on this machine: Debian's 3.11.2 (PGO,
    LTO, libpython in the executable) parses Salt in 2.51 CPU-s where this machine's pyenv 3.11.7
    (neither, a shared libpython) takes 3.71 (README, "Which Python runs the host")."""
    maps = Path("/proc/self/maps")
    shared = "libpython" in maps.read_text() if maps.exists() else None
    linked = {True: "shared libpython", False: "static libpython", None: "libpython unknown"}
    return (
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
        f"{platform.python_implementation()} {platform.python_version()} "
        f"({os.path.realpath(sys.executable)}, {linked[shared]})"
    )
