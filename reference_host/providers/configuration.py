"""Strict request `configuration` validation and normalization (docs/architecture.md#protocol-map, CORE-CHECK-CONFIGURATION).

A provider declares its settings as a small closed schema. Validation rejects unknown keys, wrong
types and explicit `null` with -32602 (failClass input). Normalization drops every setting equal to
its documented default, so an omitted configuration, `{}` and explicit defaults share one identity:
`configDigest = config_digest(provider id, capability version, normalized settings)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from asp_protocol.canonical import config_digest
from asp_protocol.errors import AspError, ErrorCode


@dataclass(frozen=True)
class Setting:
    """One setting: `kind` is `int`, `bool`, `str` (matching `pattern`), `str-set` (unique
    strings, order-free) or `object`."""

    kind: str
    default: Any = None
    minimum: int | None = None
    choices: frozenset[str] | None = None
    pattern: re.Pattern[str] | None = None
    children: dict[str, Setting] = field(default_factory=dict)


def _invalid(path: str, why: str) -> AspError:
    return AspError(
        ErrorCode.INVALID_PARAMS, "invalid-input: configuration rejected", detail=f"{path}: {why}"
    )


def _normalize(value: Any, setting: Setting, path: str) -> Any:
    """The normalized value, or `None` when it equals the default (and is therefore omitted)."""
    if value is None:
        raise _invalid(path, "explicit null is not a setting; omit it to select the default")
    if setting.kind == "object":
        return _normalize_object(value, setting.children, path) or None
    if setting.kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _invalid(path, "expected an integer")
        if setting.minimum is not None and value < setting.minimum:
            raise _invalid(path, f"must be >= {setting.minimum}")
        return None if value == setting.default else value
    if setting.kind == "bool":
        if not isinstance(value, bool):
            raise _invalid(path, "expected a boolean")
        return None if value == setting.default else value
    if setting.kind == "str":
        if not isinstance(value, str):
            raise _invalid(path, "expected a string")
        if setting.pattern is not None and not setting.pattern.match(value):
            raise _invalid(path, f"must match {setting.pattern.pattern}")
        return None if value == setting.default else value
    if setting.kind == "str-set":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _invalid(path, "expected an array of strings")
        if len(set(value)) != len(value):
            raise _invalid(path, "entries must be unique")
        unknown = sorted(
            v for v in value if setting.choices is not None and v not in setting.choices
        )
        if unknown:
            raise _invalid(path, f"unknown entries {unknown[:5]}")
        return sorted(value) or None
    raise AssertionError(f"unknown setting kind {setting.kind}")


def _normalize_object(value: Any, schema: dict[str, Setting], path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _invalid(path, "expected an object")
    unknown = sorted(set(value) - set(schema))
    if unknown:
        raise _invalid(path, f"unknown setting(s) {unknown[:5]}")
    normalized: dict[str, Any] = {}
    for key, setting in schema.items():
        if key in value:
            child = _normalize(value[key], setting, f"{path}.{key}")
            if child is not None:
                normalized[key] = child
    return normalized


@dataclass(frozen=True)
class EffectiveConfiguration:
    """The validated settings of one request: `normalized` is minimal, `values` has defaults filled in."""

    normalized: dict[str, Any]
    values: dict[str, Any]
    digest: str


def _with_defaults(schema: dict[str, Setting], normalized: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, setting in schema.items():
        if setting.kind == "object":
            values[key] = _with_defaults(setting.children, normalized.get(key, {}))
        else:
            values[key] = normalized.get(key, setting.default)
    return values


def resolve_configuration(
    params: dict[str, Any], schema: dict[str, Setting], provider_id: str, capability_version: str
) -> EffectiveConfiguration:
    """Validate `params["configuration"]` against *schema*; raise -32602 before any evaluation work."""
    if "configuration" in params and params["configuration"] is None:
        raise _invalid("configuration", "explicit null is not a configuration; omit it or send {}")
    normalized = _normalize_object(params.get("configuration", {}), schema, "configuration")
    return EffectiveConfiguration(
        normalized=normalized,
        values=_with_defaults(schema, normalized),
        digest=config_digest(provider_id, capability_version, normalized),
    )
