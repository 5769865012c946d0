"""A real `python -m bridge serve --transport streamable-http` subprocess for the HTTP tests: one
way to pick a port, start it, wait until it listens and stop it, so that each test only says what
it binds to and what it asserts."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio


def free_port() -> int:
    """A port the kernel has just handed out on loopback (free unless someone races for it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_argv(repo: Path, *extra: str) -> list[str]:
    """The bridge's streamable-HTTP `serve` command line on *repo*, with *extra* options after it."""
    transport = ("--transport", "streamable-http")
    return [sys.executable, "-m", "bridge", "serve", "--repo", str(repo), *transport, *extra]


@contextmanager
def running(
    argv: list[str], stderr_log: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run *argv* with its stderr in *stderr_log*; terminate it (kill if it lingers) at the end."""
    with stderr_log.open("wb") as log:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=env)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    """Readiness by connecting, bounded: the server binds its port only once it is up."""
    with anyio.fail_after(30):
        while process.poll() is None:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
            else:
                await stream.aclose()
                return
    raise AssertionError("the bridge exited before listening")
