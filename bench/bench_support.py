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


def interpreter() -> str:
    """Which CPython ran the figures, and whether its libpython is a shared library: the same
    source parses a quarter to two fifths slower on a build without profile-guided optimisation
    and with a shared libpython (pyenv's default) than on a distribution's build, so a figure
    means little without it (README, Benchmarks)."""
    maps = Path("/proc/self/maps")
    shared = "libpython" in maps.read_text() if maps.exists() else None
    linked = {True: "shared libpython", False: "static libpython", None: "libpython unknown"}
    return (
        f"{platform.python_implementation()} {platform.python_version()} "
        f"({os.path.realpath(sys.executable)}, {linked[shared]})"
    )
