"""A minimal test host for driving one provider process over real pipes (CORE-SERVER-* style).

It plays the host side of the inner seam: `initialize`, the `initialized` grant, `check/evaluate`,
and the `workspace/listTree` / `workspace/readBlob` callbacks answered from an in-memory snapshot.
Reads are counted and scope-checked (referenced blob + read grant, else -32012) so tests can prove
a provider gets content only through the callbacks and tolerates refusals.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from asp_protocol.canonical import blob_id, digest
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.grants import ReadGrant
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext, WireEvent

LIMITS = {"cpuPct": 50, "memoryMb": 512, "wallclockMs": 30000, "fd": 256}
READ_ONLY_GRANT: dict[str, Any] = {
    "read": ["**"],
    "write": False,
    "network": False,
    "resourceLimits": LIMITS,
}


def as_bytes(content: str | bytes) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


@dataclass
class ProviderHost:
    """The host end of one provider session plus everything the provider asked of it."""

    endpoint: JsonRpcEndpoint
    process: Process
    files: dict[str, bytes]
    grant: dict[str, Any] = field(default_factory=lambda: dict(READ_ONLY_GRANT))
    extra: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    tree_calls: list[dict[str, Any]] = field(default_factory=list)
    progress: list[Any] = field(default_factory=list)
    stderr: bytearray = field(default_factory=bytearray)
    sent: list[tuple[str | None, Any]] = field(default_factory=list)
    corrupt: set[str] = field(default_factory=set)
    refuse_tree: bool = False

    @property
    def baseline(self) -> dict[str, Any]:
        listing = sorted([path, blob_id(data)] for path, data in self.files.items())
        return {"rev": "tree:" + digest(listing)}

    # -- session --------------------------------------------------------------------------------

    async def initialize(self, protocol_version: str = "asp/1.0") -> Any:
        params = {
            "protocolVersion": protocol_version,
            "host": {"name": "provider-test-host", "version": "0"},
            "hostCapabilities": {"progress": True, "readBlob": True},
            "workspace": {"root": "/workspace", "baseline": self.baseline},
        }
        return await self.endpoint.request("initialize", params, timeout=10)

    async def initialized(self, grant: dict[str, Any] | None = None) -> None:
        if grant is not None:
            self.grant = grant
        await self.endpoint.notify(
            "initialized", {"grantedPermissions": self.grant, "baseline": self.baseline}
        )

    async def start(self, grant: dict[str, Any] | None = None) -> Any:
        result = await self.initialize()
        await self.initialized(grant)
        return result

    async def evaluate(self, params: dict[str, Any], *, timeout: float = 20) -> Any:
        async def on_progress(value: Any) -> None:
            self.progress.append(value)

        return await self.endpoint.request(
            "check/evaluate", params, timeout=timeout, on_progress=on_progress
        )

    # -- candidate content ----------------------------------------------------------------------

    def changeset(
        self, edits: dict[str, str | bytes | None], *, renames: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """A ChangeSet against the baseline: content for create/modify, None for delete; renames new->old."""
        changes: list[dict[str, Any]] = []
        for new_path, old_path in (renames or {}).items():
            before = blob_id(self.files[old_path])
            change = {"path": new_path, "kind": "rename", "from": old_path, "before": before}
            if new_path in edits and edits[new_path] is not None:
                change["after"] = self.add_blob(new_path, as_bytes(edits.pop(new_path)))  # type: ignore[arg-type]
            changes.append(change)
        for path, content in edits.items():
            if content is None:
                changes.append(
                    {"path": path, "kind": "delete", "before": blob_id(self.files[path])}
                )
            elif path in self.files:
                after = self.add_blob(path, as_bytes(content))
                changes.append(
                    {
                        "path": path,
                        "kind": "modify",
                        "before": blob_id(self.files[path]),
                        "after": after,
                    }
                )
            else:
                changes.append(
                    {
                        "path": path,
                        "kind": "create",
                        "after": self.add_blob(path, as_bytes(content)),
                    }
                )
        return {"baseline": self.baseline, "changes": changes}

    def add_blob(self, path: str, data: bytes) -> str:
        identity = blob_id(data)
        self.extra[identity] = (path, data)
        return identity

    # -- callbacks ------------------------------------------------------------------------------

    def _paths_of(self, identity: str) -> list[str]:
        paths = [p for p, data in self.files.items() if blob_id(data) == identity]
        if identity in self.extra:
            paths.append(self.extra[identity][0])
        return paths

    async def _list_tree(self, params: Any, ctx: RequestContext) -> dict[str, Any]:
        params = params or {}
        self.tree_calls.append(params)
        if self.refuse_tree:
            raise AspError(ErrorCode.SCOPE_DENIED, "listTree refused by this test host")
        grant = ReadGrant(self.grant.get("read", []))
        globs = ReadGrant(params["globs"]) if "globs" in params else None
        entries = []
        for path, data in sorted(self.files.items()):
            if grant.allows(path) and (globs is None or globs.allows(path)):
                entries.append({"path": path, "blobId": blob_id(data), "kind": "file"})
        return {"entries": entries}

    async def _read_blob(self, params: Any, ctx: RequestContext) -> dict[str, Any]:
        grant = ReadGrant(self.grant.get("read", []))
        out = []
        for identity in params["blobs"]:
            paths = self._paths_of(identity)
            if not paths or not any(grant.allows(p) for p in paths):
                self.refused[identity] = self.refused.get(identity, 0) + 1
                raise AspError(
                    ErrorCode.SCOPE_DENIED,
                    "blob outside the session or the read grant",
                    detail=identity,
                )
            data = self.extra[identity][1] if identity in self.extra else self.files[paths[0]]
            if identity in self.corrupt:
                data = b"# not the content this blob id names\n"
            out.append(
                {"id": identity, "encoding": "base64", "bytes": base64.b64encode(data).decode()}
            )
        self.reads.extend(item["id"] for item in out)
        return {"blobs": out}


async def _drain(stream: Any, sink: bytearray) -> None:
    try:
        async for chunk in stream:
            sink.extend(chunk[-65536:])
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass


@asynccontextmanager
async def provider_host(
    module: str, *args: str, files: dict[str, str | bytes] | None = None, cwd: str | None = None
) -> AsyncIterator[ProviderHost]:
    """Spawn `python -m module *args` and yield a host bound to its pipes; kills it on the way out."""
    process = await anyio.open_process(
        [sys.executable, "-m", module, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
    )
    assert process.stdout is not None and process.stdin is not None
    sent: list[tuple[str | None, Any]] = []

    def record(event: WireEvent) -> None:
        if event.direction == "out":
            sent.append((event.method, event.id))

    endpoint = JsonRpcEndpoint(process.stdout, process.stdin, name="test-host", on_wire=record)
    host = ProviderHost(
        endpoint, process, {p: as_bytes(c) for p, c in (files or {}).items()}, sent=sent
    )
    endpoint.register("workspace/listTree", host._list_tree)
    endpoint.register("workspace/readBlob", host._read_blob)
    tg: TaskGroup
    async with anyio.create_task_group() as tg:
        tg.start_soon(endpoint.serve)
        tg.start_soon(_drain, process.stderr, host.stderr)
        try:
            yield host
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
            tg.cancel_scope.cancel()


async def _stop(process: Process) -> None:
    if process.returncode is None:
        try:
            assert process.stdin is not None
            await process.stdin.aclose()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        with anyio.move_on_after(5):
            await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()


async def wait_exit(process: Process, timeout: float = 10) -> int:
    with anyio.fail_after(timeout):
        return await process.wait()


async def wait_sent(host: ProviderHost, method: str, timeout: float = 10) -> Any:
    """The id of the first request of *method* once it is on the wire (so a later message follows it)."""
    with anyio.fail_after(timeout):
        while True:
            for sent_method, request_id in host.sent:
                if sent_method == method and request_id is not None:
                    return request_id
            await anyio.sleep(0.01)


# The error a provider answers `check/evaluate` with before `initialized`: (code, message, failClass,
# retryable), as `error_axes` reads them.
NOT_INITIALIZED = (-32010, "provider-not-initialized", "health", True)


def error_axes(error: AspError) -> tuple[int, str, str, bool | None]:
    """The four axes of an ASP error a test compares at once."""
    return (error.code, error.message, error.fail_class, error.retryable)
