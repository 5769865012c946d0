"""Provider side of `edit/propose` (PROTOCOL §6.8), shared by the built-in edit providers.

Params intake (`edit-propose.schema.json#/$defs/params`, closed), the `edit` capability block,
UTF-16 text edits from code-point columns, and the EditPlan builders for each status. An edit
provider reads content only through the host callbacks and never writes: the plan is data.
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from asp_protocol.canonical import config_digest
from asp_protocol.edit_plan import EDIT_CAPABILITY_VERSION
from asp_protocol.errors import AspError, ErrorCode

PROPOSE_KEYS = frozenset(
    {"operation", "baseline", "scope", "proposalId", "idempotencyKey", "args", "priorContext"}
)


def edit_capability(operations: list[str]) -> dict[str, Any]:
    """The `edit` capability block: text edits and whole-resource blobs, preconditions required."""
    return {
        "capabilityVersion": EDIT_CAPABILITY_VERSION,
        "operations": list(operations),
        "operationSupport": {
            "create": True,
            "modify": True,
            "delete": False,
            "rename": False,
            "move": False,
        },
        "textEditSupport": True,
        "wholeResourceSupport": True,
        "renameMoveSupport": False,
        "preconditionSupport": "required",
        "blobUploadSupport": "workspace/putBlob",
        "partialProposalSemantics": "status",
        "scopes": ["workspace"],
    }


@dataclass(frozen=True)
class ProposeRequest:
    operation: str
    baseline: dict[str, Any]
    scope: list[str]
    proposal_id: str
    args: dict[str, Any]


def parse_propose(params: Any) -> ProposeRequest:
    """Bad `edit/propose` params are -32602 (input)."""
    if not isinstance(params, dict) or set(params) - PROPOSE_KEYS:
        raise AspError(ErrorCode.INVALID_PARAMS, "edit/propose params are not the closed shape")
    operation, baseline, scope = (
        params.get("operation"),
        params.get("baseline"),
        params.get("scope"),
    )
    proposal_id, args = params.get("proposalId"), params.get("args", {})
    if (
        not isinstance(operation, str)
        or not operation
        or not isinstance(baseline, dict)
        or not isinstance(baseline.get("rev"), str)
        or not isinstance(scope, dict)
        or not isinstance(scope.get("paths"), list)
        or not scope["paths"]
        or not isinstance(proposal_id, str)
        or not proposal_id
        or not isinstance(args, dict)
    ):
        raise AspError(
            ErrorCode.INVALID_PARAMS, "edit/propose needs operation, baseline, scope, proposalId"
        )
    paths = [p for p in scope["paths"] if isinstance(p, str)]
    return ProposeRequest(operation, baseline, paths, proposal_id, args)


def in_scope(path: str, scope: list[str]) -> bool:
    return any(s == "**" or path == s or path.startswith(s.rstrip("/") + "/") for s in scope)


def utf16_column(line: str, codepoints: int) -> int:
    """The UTF-16 code-unit column of code-point column *codepoints* in *line*."""
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in line[:codepoints])


@dataclass
class FileEdits:
    """The text edits of one existing file, all computed on its blob *basis*."""

    path: str
    basis: str
    lines: list[str]
    edits: list[dict[str, Any]] = field(default_factory=list)

    def replace(
        self, line: int, start: int, end: int, new_text: str, end_line: int | None = None
    ) -> None:
        """Replace code points [start, end) of *line* (through *end_line*) with *new_text*."""
        last = line if end_line is None else end_line
        self.edits.append(
            {
                "range": {
                    "start": {"line": line, "char": utf16_column(self.lines[line], start)},
                    "end": {"line": last, "char": utf16_column(self.lines[last], end)},
                },
                "rangeBasis": self.basis,
                "coordinateSystem": "utf16",
                "newText": new_text,
            }
        )

    def delete_lines(self, first: int, last: int) -> None:
        """Remove whole lines first..last (inclusive), line breaks included."""
        if last + 1 < len(self.lines):
            start, end = {"line": first, "char": 0}, {"line": last + 1, "char": 0}
        else:
            start = {"line": first, "char": 0}
            end = {"line": last, "char": utf16_column(self.lines[last], len(self.lines[last]))}
        self.edits.append(
            {
                "range": {"start": start, "end": end},
                "rangeBasis": self.basis,
                "coordinateSystem": "utf16",
                "newText": "",
            }
        )


def split_lines(text: str) -> list[str]:
    """Lines without their breaks, split the way the host counts lines (\\n, \\r\\n, \\r)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def provider_block(provider_id: str, version: str, build: str) -> dict[str, Any]:
    return {
        "id": provider_id,
        "version": version,
        "capabilityFamily": "edit",
        "capabilityVersion": EDIT_CAPABILITY_VERSION,
        "configDigest": config_digest(provider_id, EDIT_CAPABILITY_VERSION, {}),
        "buildDigest": build,
    }


def plan(
    request: ProposeRequest,
    provider: dict[str, Any],
    blobs: list[str],
    files: list[FileEdits],
    *,
    creates: list[tuple[str, str]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A complete EditPlan: text edits of *files* plus whole-blob *creates* (path, blob)."""
    touched: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    for item in files:
        if not item.edits:
            continue
        condition: dict[str, Any] = {"expectedDigest": item.basis}
        touched.append({"path": item.path, "kind": "modify", "precondition": condition})
        changes.append(
            {"path": item.path, "kind": "modify", "precondition": condition, "edits": item.edits}
        )
    for path, blob in creates or []:
        absent: dict[str, Any] = {"expectedAbsence": True}
        touched.append({"path": path, "kind": "create", "precondition": absent})
        changes.append({"path": path, "kind": "create", "precondition": absent, "after": blob})
    return {
        "proposalId": request.proposal_id,
        "provider": provider,
        "status": "complete",
        "baseline": dict(request.baseline),
        "validAsOf": {"baseline": dict(request.baseline), "blobs": sorted(set(blobs))},
        "touchedResources": touched,
        "workspaceEdit": {"baseline": dict(request.baseline), "documentChanges": changes},
        **extra,
    }


def status_plan(
    request: ProposeRequest,
    provider: dict[str, Any],
    blobs: list[str],
    status: str,
    body: dict[str, Any],
) -> dict[str, Any]:
    """A non-applying EditPlan: `incomplete`, `unsupported` or `error` with its explanation."""
    key = {"incomplete": "incomplete", "unsupported": "unsupported"}.get(status, "refusal")
    return {
        "proposalId": request.proposal_id,
        "provider": provider,
        "status": status,
        "baseline": dict(request.baseline),
        "validAsOf": {"baseline": dict(request.baseline), "blobs": sorted(set(blobs))},
        "touchedResources": [],
        key: body,
    }


class BlobCache:
    """Blob contents an edit provider has read, zlib-compressed, by blob id (content-addressed,
    so valid across baselines), the least recently used dropped past *max_bytes*. A rename reads
    every Python file's text for strings that may name it (18 MB on Django, 26 MB on sympy, about
    2 s through the host); kept here, the next request reads only what changed, and a request cut
    short by its time box keeps what it had read for the next."""

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0

    def get(self, blob: str) -> bytes | None:
        packed = self._items.get(blob)
        if packed is None:
            return None
        self._items.move_to_end(blob)
        return zlib.decompress(packed)

    def put(self, blob: str, data: bytes) -> None:
        if blob in self._items:
            return
        packed = zlib.compress(data, 1)
        self._items[blob] = packed
        self._size += len(packed)
        while self._size > self.max_bytes and self._items:
            _, dropped = self._items.popitem(last=False)
            self._size -= len(dropped)
