"""Provider-side client of the host callbacks (`workspace/listTree`, `workspace/readBlob`, docs/architecture.md#protocol-map).

Every byte a provider analyses arrives through these calls, never from the filesystem. Each call is
scoped to one request and records the blobs the host actually served, verified against their
content address, so the Assessment's `validAsOf.blobs` names exactly what was read.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Any

from asp_protocol.errors import AspError, ProtocolViolation
from asp_protocol.jsonrpc import JsonRpcEndpoint
from asp_protocol.vocabulary import BLOB_REF
from asp_protocol.wire import present

CALLBACK_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class TreeEntry:
    path: str
    blob_id: str
    kind: str


@dataclass(frozen=True)
class TreeListing:
    entries: list[TreeEntry]
    truncated: bool


def content_matches(blob: str, data: bytes) -> bool:
    """True when *data* hashes to *blob*; ids in an algorithm other than sha256 cannot be checked."""
    algorithm, _, hexdigest = blob[len("blob:") :].partition(":")
    if algorithm != "sha256":
        return True
    return hashlib.sha256(data).hexdigest() == hexdigest


class HostCallbacks:
    """Callback calls for one request; `blobs_read` lists served blobs in first-read order."""

    def __init__(self, endpoint: JsonRpcEndpoint, *, timeout: float = CALLBACK_TIMEOUT_S) -> None:
        self._endpoint = endpoint
        self._timeout = timeout
        self._read: dict[str, None] = {}
        self.mismatched: set[str] = set()
        self.calls = 0

    @property
    def blobs_read(self) -> list[str]:
        return list(self._read)

    async def list_tree(
        self,
        globs: list[str] | None = None,
        paths: list[str] | None = None,
        baseline: dict[str, Any] | None = None,
    ) -> TreeListing:
        """Baseline entries the host lets this provider see (already filtered to the read grant)."""
        params = present(globs=globs, paths=paths, baseline=baseline)
        self.calls += 1
        result = await self._endpoint.request("workspace/listTree", params, timeout=self._timeout)
        if not isinstance(result, dict) or not isinstance(result.get("entries"), list):
            raise ProtocolViolation("workspace/listTree result has no entries array")
        entries: list[TreeEntry] = []
        for item in result["entries"]:
            if not isinstance(item, dict):
                raise ProtocolViolation("workspace/listTree entry is not an object")
            path, blob, kind = item.get("path"), item.get("blobId"), item.get("kind")
            if not isinstance(path, str) or not isinstance(blob, str) or not BLOB_REF.match(blob):
                raise ProtocolViolation("workspace/listTree entry lacks a path or a blob id")
            if kind not in ("file", "dir", "symlink"):
                raise ProtocolViolation("workspace/listTree entry has an unknown kind")
            entries.append(TreeEntry(path, blob, kind))
        return TreeListing(entries, result.get("truncated") is True)

    async def read_blobs(self, ids: list[str]) -> dict[str, bytes]:
        """The bytes of every requested blob the host served; raises AspError when the host refuses.

        Blobs the host omits are absent from the result; bytes that do not hash to their id are
        dropped too (listed in `mismatched`) and never recorded as read.
        """
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        self.calls += 1
        result = await self._endpoint.request(
            "workspace/readBlob", {"blobs": wanted}, timeout=self._timeout
        )
        if not isinstance(result, dict) or not isinstance(result.get("blobs"), list):
            raise ProtocolViolation("workspace/readBlob result has no blobs array")
        served: dict[str, bytes] = {}
        for item in result["blobs"]:
            if not isinstance(item, dict) or item.get("id") not in wanted:
                continue
            data = _decode(item)
            if not content_matches(item["id"], data):
                self.mismatched.add(item["id"])
                continue
            served[item["id"]] = data
            self._read[item["id"]] = None
        return served

    async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, AspError]]:
        """Read a batch; when the host refuses it, retry one blob at a time to learn which are refused."""
        try:
            return await self.read_blobs(ids), {}
        except AspError as error:
            unique = list(dict.fromkeys(ids))
            if len(unique) == 1:
                return {}, {unique[0]: error}
        served: dict[str, bytes] = {}
        refused: dict[str, AspError] = {}
        for blob in dict.fromkeys(ids):
            try:
                served.update(await self.read_blobs([blob]))
            except AspError as error:
                refused[blob] = error
        return served, refused


def _decode(item: dict[str, Any]) -> bytes:
    text = item.get("bytes")
    if not isinstance(text, str):
        raise ProtocolViolation("workspace/readBlob entry has no bytes string")
    encoding = item.get("encoding")
    if encoding == "utf-8":
        return text.encode("utf-8")
    if encoding == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ProtocolViolation("workspace/readBlob entry is not valid base64") from exc
    raise ProtocolViolation("workspace/readBlob entry has an unknown encoding")
