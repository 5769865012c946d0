"""What the benchmark scripts share. bench/ is not a package: each script runs by path
(`python bench/NAME.py`), so this module is imported from beside it."""

from __future__ import annotations

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
