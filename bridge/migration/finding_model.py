"""The normalized finding every old-tool input becomes, the input error that names a bad entry,
and the path and value helpers the ASP and SARIF readers share."""

from __future__ import annotations

import json
from typing import Any, Literal

from asp_protocol.wire import wire_fields
from bridge.migration.base import Model
from bridge.migration.paths import normalize_path

FindingsFormat = Literal["asp", "sarif"]
Severity = Literal["error", "warning", "info"]
MAX_FINDINGS = 100_000


class Position(Model):
    line: int
    char: int


class Finding(Model):
    """One finding, whichever tool produced it: repo-relative path, rule, zero-based range."""

    index: int
    pointer: str
    origin: FindingsFormat
    path: str
    rule: str
    message: str
    severity: Severity
    start: Position | None = None
    end: Position | None = None
    fingerprints: tuple[str, ...] = ()
    tool: str | None = None


class FindingsInput(Model):
    format: FindingsFormat
    tools: tuple[str, ...] = ()
    findings: tuple[Finding, ...]


class FindingsError(ValueError):
    """Malformed findings input; names the bad entry (index, JSON pointer) and field."""

    def __init__(
        self, reason: str, *, index: int | None = None, pointer: str = "", field: str = ""
    ) -> None:
        self.reason = reason
        self.index = index
        self.pointer = pointer
        self.field = field
        where = []
        if index is not None:
            where.append(f"entry {index} ({pointer})" if pointer else f"entry {index}")
        elif pointer:
            where.append(pointer)
        if field:
            where.append(f"field '{field}'")
        prefix = "malformed findings" + (": " + ", ".join(where) if where else "")
        super().__init__(f"{prefix}: {reason}")

    def to_dict(self) -> dict[str, Any]:
        return wire_fields(self, "reason", "index", "pointer", "field")


# -- paths and helpers ----------------------------------------------------------------------------


def field_path(path: str, repo_root: str | None, index: int, pointer: str, field: str) -> str:
    normalized = normalize_path(path, repo_root)
    if not normalized:
        raise FindingsError("path is empty", index=index, pointer=pointer, field=field)
    return normalized


def check_count(count: int) -> None:
    if count > MAX_FINDINGS:
        raise FindingsError(f"too many findings ({count} > {MAX_FINDINGS})")


def type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:60] + "…"
