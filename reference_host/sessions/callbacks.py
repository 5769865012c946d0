"""Callback serving for a provider session: `workspace/listTree` and `workspace/readBlob` inside the
current request's scope and the session's read grant; `workspace/putBlob` is always refused.

The host's only filesystem door for a provider, so its bounds (callbacks per evaluation, blobs and
bytes per read, tree entries) live here, next to the checks they bound.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.grants import ReadGrant
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext
from reference_host.providers.memory import HOST_HEAP

log = logging.getLogger("reference_host.sessions.session")

MAX_BLOBS_PER_READ = 256
MAX_READ_BYTES = 32 * 1024 * 1024
MAX_CALLBACKS_PER_EVALUATION = 4096
MAX_TREE_ENTRIES = 20000


@dataclass
class EvaluationScope:
    """What one evaluation lets the provider read, and what it actually read."""

    baseline: dict[str, Any]
    index: Callable[[], dict[str, str]]  # path -> blob id of the baseline snapshot (lazy)
    referenced: dict[str, set[str]]  # blob id -> paths it appears under (changeset)
    load: Callable[[str], Awaitable[bytes | None]]
    served: set[str] = field(default_factory=set)
    callbacks: int = 0
    # optional: bytes of many blobs in one go (absent ones missing), so a readBlob batch costs one
    # trip to the object store instead of one per blob
    load_many: Callable[[list[str]], Awaitable[dict[str, bytes]]] | None = None
    by_blob: dict[str, list[str]] | None = None  # blob id -> baseline paths (built on first use)
    links: Callable[[], frozenset[str]] | None = None  # snapshot paths that are symbolic links

    async def baseline_paths(self, identity: str) -> list[str]:
        """Paths of *identity* in the baseline snapshot, from a reverse map built once per scope."""
        if self.by_blob is None:
            index = await anyio.to_thread.run_sync(self.index)
            by_blob: dict[str, list[str]] = {}
            for path, blob in index.items():
                by_blob.setdefault(blob, []).append(path)
            self.by_blob = by_blob
        return self.by_blob.get(identity, [])


def _listing_of(scope: EvaluationScope) -> tuple[dict[str, str], frozenset[str]]:
    """The snapshot and its links in one trip off the event loop (a listing per inspect query)."""
    return scope.index(), scope.links() if scope.links else frozenset()


def _encode(data: bytes) -> dict[str, str]:
    try:
        return {"encoding": "utf-8", "bytes": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"encoding": "base64", "bytes": base64.b64encode(data).decode("ascii")}


class CallbackServer:
    """The host callbacks one provider session serves (a part the session owns).

    `scope` is set only while a request runs. `standing` is the baseline-only scope an inspect
    session keeps between requests, so that an index build the provider started for a request may
    finish after that request ended: it serves the blobs of the last baseline the session was
    asked about (never a changeset's), inside the same read grant and with its own callback budget.
    `grant` is the narrowed read grant sent in `initialized`; `served_ever` every blob served.
    """

    def __init__(self, provider_id: str) -> None:
        self.id = provider_id
        self.grant: list[str] = []
        self.scope: EvaluationScope | None = None
        self.standing: EvaluationScope | None = None
        self.served_ever: set[str] = set()

    def register(self, endpoint: JsonRpcEndpoint) -> None:
        """Serve the callbacks on the provider's endpoint."""
        endpoint.register("workspace/listTree", self._list_tree)
        endpoint.register("workspace/readBlob", self._read_blob)
        endpoint.register("workspace/putBlob", self._put_blob)
        endpoint.on_notification("window/logMessage", self._log_message)

    def _scope_for_callback(self) -> EvaluationScope:
        scope = self.scope or self.standing
        if scope is None:
            raise AspError(ErrorCode.SCOPE_DENIED, "no evaluation in progress for this session")
        scope.callbacks += 1
        if scope.callbacks > MAX_CALLBACKS_PER_EVALUATION:
            raise AspError(
                ErrorCode.SCOPE_DENIED, "callback budget for this evaluation is exhausted"
            )
        return scope

    async def _list_tree(self, params: Any, ctx: RequestContext) -> dict[str, Any]:
        scope = self._scope_for_callback()
        if params is not None and not isinstance(params, dict):
            raise AspError(ErrorCode.INVALID_PARAMS, "listTree params must be an object")
        params = params or {}
        globs = params.get("globs")
        paths = params.get("paths")
        requested = params.get("baseline")
        if isinstance(requested, dict) and requested.get("rev") != scope.baseline.get("rev"):
            raise AspError(
                ErrorCode.STALE_BASELINE, "listTree baseline is not the session baseline"
            )
        if (globs is not None and not _strings(globs)) or (
            paths is not None and not _strings(paths)
        ):
            raise AspError(ErrorCode.INVALID_PARAMS, "globs and paths must be arrays of strings")
        index, links = await anyio.to_thread.run_sync(_listing_of, scope)
        # each matcher built once: the listing asks them for every path of the tree
        granted = ReadGrant(self.grant)
        wanted = ReadGrant(globs) if globs is not None else None
        entries = []
        for path in sorted(index):
            if not granted.allows(path):
                continue
            if paths is not None and not any(
                path == p or path.startswith(p.rstrip("/") + "/") for p in paths
            ):
                continue
            if wanted is not None and not wanted.allows(path):
                continue
            kind = "symlink" if path in links else "file"
            entries.append({"path": path, "blobId": index[path], "kind": kind})
            if len(entries) >= MAX_TREE_ENTRIES:
                return {"entries": entries, "truncated": True}
        return {"entries": entries}

    async def _read_blob(self, params: Any, ctx: RequestContext) -> dict[str, Any]:
        scope = self._scope_for_callback()
        blobs = params.get("blobs") if isinstance(params, dict) else None
        if not _strings(blobs) or not blobs:
            raise AspError(ErrorCode.INVALID_PARAMS, "readBlob needs a non-empty array of blob ids")
        if len(blobs) > MAX_BLOBS_PER_READ:
            raise AspError(
                ErrorCode.SCOPE_DENIED, f"at most {MAX_BLOBS_PER_READ} blobs per readBlob"
            )
        granted = ReadGrant(self.grant)
        for identity in blobs:
            paths = set(scope.referenced.get(identity, ())) or set(
                await scope.baseline_paths(identity)
            )
            if not paths:
                raise AspError(
                    ErrorCode.SCOPE_DENIED,
                    "blob is not part of this session's baseline or changeset",
                    detail=identity[:80],
                )
            if not any(granted.allows(p) for p in paths):
                raise AspError(
                    ErrorCode.SCOPE_DENIED, "blob is outside the read grant", detail=identity[:80]
                )
        loaded = await scope.load_many(list(blobs)) if scope.load_many is not None else {}
        out = []
        total = 0
        for identity in blobs:
            data = loaded.get(identity) or await scope.load(identity)
            if data is None:
                raise AspError(
                    ErrorCode.BLOB_UNAVAILABLE,
                    "blob content is not available",
                    detail=identity[:80],
                )
            total += len(data)
            if total > MAX_READ_BYTES:
                raise AspError(ErrorCode.SCOPE_DENIED, "readBlob response exceeds the size bound")
            out.append({"id": identity, **_encode(data)})
        for item in out:
            scope.served.add(item["id"])
            self.served_ever.add(item["id"])
        await HOST_HEAP.trim_if_due(total)  # the batches before this one are garbage by now
        return {"blobs": out}

    async def _put_blob(self, params: Any, ctx: RequestContext) -> Any:
        raise AspError(
            ErrorCode.SCOPE_DENIED, "putBlob needs the edit capability and a write grant"
        )

    async def _log_message(self, params: Any) -> None:
        if isinstance(params, dict):
            log.info("provider %s says: %.500r", self.id, params.get("message"))


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
