"""One readable line for a tool call whose arguments do not fit the tool's input schema.

The SDK answers such a call with pydantic's multi-line report (error type, input type, a docs URL),
which people and models read badly. Here the arguments are checked against the same schema the
tool publishes, and the first problem becomes one line naming the argument, what was wrong and the
values or shape it accepts. The caller's value is echoed only briefly: it is the caller's own data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a call is refused (rare), not on every bridge start
    from jsonschema.exceptions import ValidationError

_ECHO = 60
_ALLOWED_SHOWN = 12


def _deref(schema: Any, root: Mapping[str, Any]) -> Any:
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        if ref.startswith("#/$defs/"):
            return root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), schema)
    return schema


def accepted(schema: Any, root: Mapping[str, Any]) -> str:
    """What a (sub)schema accepts, in words: enum values, a type with its bounds, or alternatives."""
    schema = _deref(schema, root)
    if not isinstance(schema, dict):
        return "any value"
    if "enum" in schema:
        values = [json.dumps(v) for v in schema["enum"][:_ALLOWED_SHOWN]]
        return "one of " + ", ".join(values)
    if "const" in schema:
        return json.dumps(schema["const"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        words = [accepted(option, root) for option in options]
        return " or ".join(dict.fromkeys(w for w in words if w))
    kind = schema.get("type")
    if kind == "null":
        return "null (omit it)"
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        bounds = f" from {low} to {high}" if low is not None and high is not None else ""
        bounds = bounds or (f" ≥ {low}" if low is not None else f" ≤ {high}" if high else "")
        return f"an {kind}{bounds}" if kind == "integer" else f"a number{bounds}"
    if kind == "string":
        low, high = schema.get("minLength"), schema.get("maxLength")
        size = f" of {low or 0} to {high} characters" if high is not None else ""
        return f"a string{size}"
    if kind == "array":
        item = accepted(schema.get("items"), root) if "items" in schema else "any value"
        return f"an array whose items are {item}"
    if kind == "object":
        return "an object"
    if kind == "boolean":
        return "true or false"
    return "any value"


def _echo(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _ECHO else text[:_ECHO] + "…"


def problem(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> str | None:
    """The first argument problem as one line, or None when *arguments* fit *schema*."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    errors = list(Draft202012Validator(dict(schema)).iter_errors(dict(arguments)))
    if not errors:
        return None
    error: ValidationError = best_match(errors)
    properties = schema.get("properties", {})
    if error.validator == "required" and not error.absolute_path:
        missing = [name for name in schema.get("required", []) if name not in arguments]
        name = missing[0] if missing else "?"
        return (
            f"{tool}: argument `{name}` is required; it takes "
            f"{accepted(properties.get(name), schema)}"
        )
    path = list(error.absolute_path)
    if not path:
        return f"{tool}: the arguments must be an object"
    name = str(path[0])
    where = name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[1:])
    sub = properties.get(name) if len(path) == 1 else error.schema
    return (
        f"{tool}: argument `{where}` = {_echo(error.instance)} is not accepted; it takes "
        f"{accepted(sub, schema)}"
    )
