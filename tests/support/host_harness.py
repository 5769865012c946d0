"""Black-box driver of a real `asp-host serve` subprocess over its stdio pipes (the outer seam).

Tests stay synchronous: a blocking portal runs one event loop thread per host, and every outer
request goes through `asp_protocol.jsonrpc.JsonRpcEndpoint`. A tap on the host's stdout also keeps
the messages the endpoint cannot route (id null, or the string ids of raw requests) so bad-input
tests can see the host's answer to a garbage line.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from asp_protocol.jsonrpc import JsonRpcEndpoint

DEFAULT_CALL_TIMEOUT = 30.0
STDERR_KEEP_BYTES = 256 * 1024


class _LockedSend(ByteSendStream):
    """The host's stdin, shared by the endpoint and raw writes without interleaving lines."""

    def __init__(self, inner: ByteSendStream) -> None:
        self._inner = inner
        self._lock = anyio.Lock()

    async def send(self, item: bytes) -> None:
        async with self._lock:
            await self._inner.send(item)

    async def aclose(self) -> None:
        async with self._lock:
            await self._inner.aclose()


class _TappedReceive(ByteReceiveStream):
    """The host's stdout: passes bytes to the endpoint and keeps unroutable messages by id."""

    def __init__(self, inner: ByteReceiveStream) -> None:
        self._inner = inner
        self._buffer = bytearray()
        self.kept: dict[Any, deque[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._arrived = anyio.Event()

    async def receive(self, max_bytes: int = 65536) -> bytes:
        chunk = await self._inner.receive(max_bytes)
        self._buffer.extend(chunk)
        while (newline := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            self._keep(line)
        return chunk

    def _keep(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = {"unparseable": line[:200].decode("utf-8", "replace")}
        if not isinstance(message, dict):
            return
        if "method" in message and "id" not in message:
            self.notifications.append(message)
            return
        key = message.get("id")
        if key is None or isinstance(key, str):
            self.kept.setdefault(key, deque()).append(message)
            self._arrived.set()
            self._arrived = anyio.Event()

    async def wait(self, key: Any, timeout: float) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            while not self.kept.get(key):
                await self._arrived.wait()
        return self.kept[key].popleft()

    async def aclose(self) -> None:
        await self._inner.aclose()


def host_argv(repo: Path, trusted_dir: Path | None, assurance: str | None) -> list[str]:
    argv = [sys.executable, "-m", "reference_host", "serve", "--repo", str(repo)]
    if trusted_dir is not None:
        argv += ["--trusted-dir", str(trusted_dir)]
    if assurance is not None:
        argv += ["--assurance", assurance]
    return argv


def host_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any ambient trusted dir, plus *extra*."""
    env = {k: v for k, v in os.environ.items() if k != "ASP_HOST_TRUSTED_DIR"}
    env.update(extra or {})
    return env


class HostProcess:
    """One `python -m reference_host serve` subprocess and a JSON-RPC client on its pipes."""

    def __init__(
        self,
        repo: Path,
        trusted_dir: Path | None = None,
        *,
        assurance: str | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.argv = host_argv(repo, trusted_dir, assurance)
        self.env = host_env(env)
        self.cwd = cwd or repo.parent
        self._stack = contextlib.ExitStack()
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._process: Process | None = None
        self._send: _LockedSend | None = None
        self._tap: _TappedReceive | None = None
        self.endpoint: JsonRpcEndpoint | None = None
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._serve: Future[None] | None = None
        self.returncode: int | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> HostProcess:
        self._portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal("asyncio"))
        self._portal.call(self._spawn)
        self._serve = self._portal.start_task_soon(self._serve_endpoint)
        self._portal.start_task_soon(self._drain_stderr)
        return self

    async def _spawn(self) -> None:
        self._process = await anyio.open_process(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=self.env,
        )
        assert self._process.stdin and self._process.stdout
        self._send = _LockedSend(self._process.stdin)
        self._tap = _TappedReceive(self._process.stdout)
        self.endpoint = JsonRpcEndpoint(
            self._tap, self._send, name="asp-host", max_line_bytes=64 << 20
        )

    async def _serve_endpoint(self) -> None:
        assert self.endpoint is not None
        await self.endpoint.serve()

    def stderr_text(self) -> str:
        """What the host wrote to stderr so far (its logs; the most recent 256 KiB)."""
        return b"".join(self._stderr).decode("utf-8", "replace")

    async def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        echo = os.environ.get("ASP_TEST_HOST_STDERR") == "1"
        with contextlib.suppress(
            anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
        ):
            while True:
                chunk = await self._process.stderr.receive(65536)
                if echo:
                    sys.stderr.write(chunk.decode("utf-8", "replace"))
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size > STDERR_KEEP_BYTES and len(self._stderr) > 1:
                    self._stderr_size -= len(self._stderr.popleft())

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def close_stdin(self) -> None:
        """What a client does when it goes away: the host must see EOF and shut down."""
        assert self._portal is not None and self._send is not None
        with contextlib.suppress(Exception):
            self._portal.call(self._send.aclose)

    def wait_exit(self, timeout: float) -> int | None:
        """The exit code, or None when the host is still running after *timeout* seconds."""
        assert self._portal is not None
        return self._portal.call(self._wait_exit, timeout)

    async def _wait_exit(self, timeout: float) -> int | None:
        assert self._process is not None
        with anyio.move_on_after(timeout):
            return await self._process.wait()
        return None

    def stop(self, timeout: float = 10.0) -> int | None:
        """Close stdin, wait for a clean exit; kill (this host's own pid only) if it hangs."""
        if self._portal is None:
            return self.returncode
        try:
            self.close_stdin()
            code = self.wait_exit(timeout)
            if code is None and self._process is not None:
                self._process.kill()
                self.wait_exit(5)
                code = None
            self.returncode = code
        finally:
            self._stack.close()
            self._portal = None
        return self.returncode

    # -- requests ---------------------------------------------------------------------------

    def call(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT,
        progress: list[Any] | None = None,
    ) -> Any:
        """One outer request; raises AspError on a JSON-RPC error, ConnectionClosed on a dead host.

        `$/progress` values the host sends for this request are appended to *progress*.
        """
        assert self._portal is not None and self.endpoint is not None
        on_progress = None
        if progress is not None:

            async def on_progress(value: Any) -> None:
                progress.append(value)

        request = partial(
            self.endpoint.request, method, params, timeout=timeout, on_progress=on_progress
        )
        return self._portal.call(request)

    def start_call(
        self, method: str, params: Any = None, *, timeout: float = DEFAULT_CALL_TIMEOUT
    ) -> Future[Any]:
        """Send a request without waiting (concurrent applies); the future holds its outcome."""
        assert self._portal is not None and self.endpoint is not None
        return self._portal.start_task_soon(
            partial(self.endpoint.request, method, params, timeout=timeout)
        )

    def send_raw(self, data: bytes) -> None:
        """Write bytes to the host's stdin verbatim (one or more lines, or garbage)."""
        assert self._portal is not None and self._send is not None
        self._portal.call(self._send.send, data)

    def send_message(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def raw_request(self, request_id: str, method: str, params: Any = None) -> None:
        """A request with a caller-chosen string id; read its answer with `wait_message(id)`."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_message(message)

    def wait_message(
        self, key: str | None, timeout: float = DEFAULT_CALL_TIMEOUT
    ) -> dict[str, Any]:
        """The next host message with id *key* (a raw request's id, or None for id-null errors)."""
        assert self._portal is not None and self._tap is not None
        return self._portal.call(self._tap.wait, key, timeout)

    def kept_messages(self, key: str | None) -> list[dict[str, Any]]:
        assert self._tap is not None
        return list(self._tap.kept.get(key, ()))

    @property
    def notifications(self) -> list[dict[str, Any]]:
        """Every notification the host sent this client (e.g. `$/progress`)."""
        assert self._tap is not None
        return list(self._tap.notifications)

    def clear_kept(self) -> None:
        """Forget unread routed-nowhere messages, so a test only sees answers to its own input."""
        assert self._tap is not None
        assert self._portal is not None
        self._portal.call(self._tap.kept.clear)


def processes_with_arg(token: str, exclude: Sequence[int] = ()) -> list[int]:
    """Pids of live processes whose argv contains *token* (to prove providers did not outlive a host)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if token.encode() in argv and state != "Z":
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """*pid* is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"
