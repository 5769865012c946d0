"""Strict validation of `sense/*` params (sense-requests.schema.json) plus the `limit`, `offset`
and `pageBytes` extensions.

Every string arrives from the host and is untrusted; anything outside the closed shapes, or a
string with no UTF-8 form (a JSON `\\udXXX` escape of a lone surrogate), is a typed -32602
(failClass input) rather than a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.framing import UnencodableMessage, compact_json
from reference_host.providers.pyindex.paging import (
    DEFAULT_PAGE_BYTES,
    MAX_PAGE_BYTES,
    MIN_PAGE_BYTES,
)

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000
MAX_DEPTH = 16
MAX_TEXT = 4096
NODE_KINDS = ("file", "module", "class", "function", "type", "test")
CHANGE_KINDS = ("create", "modify", "delete", "rename")

PAGING = {"offset", "pageBytes"}
_ALLOWED = {
    "symbols": {"query", "kinds", "baseline", "limit", *PAGING},
    "references": {"symbol", "scope", "baseline", "limit", *PAGING},
    "callers": {"symbol", "depth", "baseline", "limit", *PAGING},
    "callees": {"symbol", "depth", "baseline", "limit", *PAGING},
    "impact": {"changeset", "scope", "depth", "baseline", "limit", *PAGING},
}
VERBS = tuple(_ALLOWED)


def invalid(message: str, detail: str | None = None) -> AspError:
    return AspError(ErrorCode.INVALID_PARAMS, message, detail=detail)


@dataclass
class InspectRequest:
    verb: str
    params: dict[str, Any]
    baseline: dict[str, Any] | None
    limit: int
    depth: int | None
    offset: dict[str, int] = field(default_factory=dict)
    page_bytes: int = DEFAULT_PAGE_BYTES

    def answer_params(self) -> dict[str, Any]:
        """The params that decide the whole answer (paging only picks a part of it)."""
        return {k: v for k, v in self.params.items() if k not in PAGING}


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise invalid(f"{what} must be a string of at most {MAX_TEXT} characters")
    return value


def _int(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"{what} must be an integer in [{low}, {high}]")
    return value


def _baseline(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not isinstance(value.get("rev"), str):
        raise invalid("baseline must be an object with a rev string")
    for key in ("dirty", "stampedAt"):
        if key in value and not isinstance(value[key], str):
            raise invalid(f"baseline.{key} must be a string")
    return value


def _offset(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or len(value) > 8:
        raise invalid("offset must be an object of list name -> integer")
    return {
        _text(name, "offset key")[:40]: _int(at, "offset value", 0, 10**7)
        for name, at in value.items()
    }


def _symbol(value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and set(value) == {"id"}:
        _text(value["id"], "symbol.id")
        return value
    if isinstance(value, dict) and set(value) == {"path", "position"}:
        _text(value["path"], "symbol.path")
        position = value["position"]
        if not isinstance(position, dict) or set(position) != {"line", "char"}:
            raise invalid("symbol.position must be {line, char}")
        _int(position["line"], "symbol.position.line", 0, 10**7)
        _int(position["char"], "symbol.position.char", 0, 10**7)
        return value
    raise invalid("symbol must be {id} or {path, position}")


def _scope(value: Any) -> Any:
    if value in ("changeset", "workspace"):
        return value
    if isinstance(value, dict) and isinstance(value.get("paths"), list):
        for path in value["paths"]:
            _text(path, "scope.paths[]")
        return value
    raise invalid('scope must be "changeset", "workspace" or {paths: [...]}')


def _changeset(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - {"baseline", "changes"}:
        raise invalid("changeset must be {baseline, changes}")
    _baseline(value.get("baseline"))
    changes = value.get("changes")
    if not isinstance(changes, list):
        raise invalid("changeset.changes must be an array")
    for change in changes:
        if not isinstance(change, dict) or set(change) - {
            "path",
            "kind",
            "from",
            "before",
            "after",
        }:
            raise invalid("changeset change has unknown fields")
        path = _text(change.get("path"), "change.path")
        if path.startswith("/") or ".." in path.split("/") or "\\" in path or not path:
            raise invalid("change.path must be a relative workspace path", detail=path[:200])
        if change.get("kind") not in CHANGE_KINDS:
            raise invalid("change.kind must be create|modify|delete|rename")
        for key in ("from", "before", "after"):
            if key in change:
                _text(change[key], f"change.{key}")
        needed = {"create": ("after",), "modify": ("before", "after"), "delete": ("before",)}.get(
            change["kind"], ("from", "before")
        )
        for key in needed:
            if key not in change:
                raise invalid(f"a {change['kind']} change needs {key}")
    return value


def parse_request(verb: str, params: Any) -> InspectRequest:
    """The validated request for *verb*, or -32602 naming the first problem."""
    if verb not in _ALLOWED:
        raise AspError(ErrorCode.METHOD_NOT_FOUND, f"unknown inspect verb {verb[:80]!r}")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise invalid("params must be an object")
    try:
        compact_json(params)
    except UnencodableMessage:  # could name nothing an answer can be written with
        raise invalid("params hold a string with no UTF-8 form (a lone surrogate)") from None
    unknown = sorted(set(params) - _ALLOWED[verb])
    if unknown:
        raise invalid(f"unknown params for {verb}", detail=", ".join(k[:40] for k in unknown[:10]))
    if verb == "symbols":
        _text(params.get("query"), "query")
        kinds = params.get("kinds")
        if kinds is not None and (
            not isinstance(kinds, list) or any(k not in NODE_KINDS for k in kinds)
        ):
            raise invalid(f"kinds must be an array of {', '.join(NODE_KINDS)}")
    elif verb == "impact":
        _changeset(params.get("changeset"))
        _scope(params.get("scope"))
    else:
        _symbol(params.get("symbol"))
        if "scope" in params:
            _scope(params["scope"])
    baseline = _baseline(params["baseline"]) if "baseline" in params else None
    limit = _int(params["limit"], "limit", 1, MAX_LIMIT) if "limit" in params else DEFAULT_LIMIT
    depth = _int(params["depth"], "depth", 1, MAX_DEPTH) if "depth" in params else None
    offset = _offset(params["offset"]) if "offset" in params else {}
    page_bytes = (
        _int(params["pageBytes"], "pageBytes", MIN_PAGE_BYTES, MAX_PAGE_BYTES)
        if "pageBytes" in params
        else DEFAULT_PAGE_BYTES
    )
    return InspectRequest(verb, params, baseline, limit, depth, offset, page_bytes)
