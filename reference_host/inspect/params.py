"""`host/queryInspect` params intake and the mapping of an outer `request` to the provider's
`sense/<verb>` params: the one place bad inspect params become -32602 / -32013 (among them a
string with no UTF-8 form, which no provider request or answer could carry)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from pydantic import ValidationError

from asp_protocol.changesets import PathError, validate_path
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.framing import UnencodableMessage, compact_json
from asp_protocol.models import ChangeSet
from asp_protocol.vocabulary import CALL_SITES, CallSite
from reference_host.sessions.inspect_session import INSPECT_VERBS

METHOD = "host/queryInspect"
PARAM_KEYS = frozenset({"callSite", "request", "baseline", "timeoutMs"})
REQUEST_KEYS = frozenset(
    {
        "verb",
        "query",
        "path",
        "symbol",
        "scope",
        "depth",
        "changeset",
        "paths",
        "kinds",
        "limit",
        "cursor",
        "pageBytes",
    }
)
MAX_IMPACT_PATHS = 500


@dataclass(frozen=True)
class InspectRequest:
    """A checked `host/queryInspect` request (the counterpart of `EvaluateRequest`)."""

    call_site: CallSite
    request: dict[str, Any]  # {verb, ...}: what the provider is asked
    baseline: dict[str, Any] | None  # the baseline asked for; None means the current snapshot
    timeout_ms: int | None


def _invalid(message: str, detail: str | None = None) -> AspError:
    return AspError(ErrorCode.INVALID_PARAMS, message, detail=detail)


def parse_params(params: Any) -> InspectRequest:
    """Bad params are -32602 (input); the request's own changeset is checked by `provider_params`."""
    if not isinstance(params, dict):
        raise _invalid("params must be an object")
    try:  # first: no detail below may echo a string that cannot be written back
        compact_json(params)
    except UnencodableMessage:
        raise _invalid("params hold a string with no UTF-8 form (a lone surrogate)") from None
    unknown = sorted(set(params) - PARAM_KEYS)
    if unknown:
        raise _invalid("unknown parameter(s)", ", ".join(unknown)[:200])
    call_site = params.get("callSite")
    if call_site not in CALL_SITES:
        raise _invalid("callSite must be interactive, gate or sweep", repr(call_site)[:100])
    request = params.get("request")
    if not isinstance(request, dict):
        raise _invalid("request must be an object")
    if request.get("verb") not in INSPECT_VERBS:
        raise _invalid(
            f"request.verb must be one of {', '.join(INSPECT_VERBS)}",
            repr(request.get("verb"))[:100],
        )
    extra = sorted(set(request) - REQUEST_KEYS)
    if extra:
        raise _invalid("unknown request key(s)", ", ".join(extra)[:200])
    baseline = params.get("baseline")
    if baseline is not None and (
        not isinstance(baseline, dict) or not isinstance(baseline.get("rev"), str)
    ):
        raise _invalid("baseline must be an object with a rev string")
    timeout = params.get("timeoutMs")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1
    ):
        raise _invalid("timeoutMs must be a positive integer")
    return InspectRequest(cast(CallSite, call_site), request, baseline, timeout)


def _symbol(value: Any) -> dict[str, Any]:
    if isinstance(value, str) and value.strip():
        return {"id": value.strip()}
    if isinstance(value, dict):
        return value
    raise _invalid("request.symbol must be a non-empty string or a symbolRef object")


def provider_params(
    request: dict[str, Any],
    baseline: dict[str, Any],
    index: dict[str, str],
    ordered: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The provider's `sense/<verb>` params for an outer `request` (shapes of sense-requests.schema);
    *ordered* is `sorted(index)` when the caller keeps it (the snapshot does)."""
    verb = request["verb"]
    out: dict[str, Any] = {}
    if verb == "symbols":
        query = request.get("query", request.get("path", ""))
        if not isinstance(query, str):
            raise _invalid("request.query / request.path must be a string")
        out["query"] = query
        if "kinds" in request:
            out["kinds"] = request["kinds"]
    elif verb == "impact":
        out["changeset"] = _impact_changeset(
            request, baseline, index, sorted(index) if ordered is None else ordered
        )
        out["scope"] = request.get("scope", "workspace")
    else:
        out["symbol"] = _symbol(request.get("symbol"))
        if verb == "references" and "scope" in request:
            out["scope"] = request["scope"]
    if verb in ("callers", "callees", "impact") and "depth" in request:
        out["depth"] = request["depth"]
    if "limit" in request:
        out["limit"] = request["limit"]
    return out


def _under(ordered: Sequence[str], index: dict[str, str], wanted: str) -> list[str]:
    """The paths of *ordered* (sorted) that are *wanted* or lie under it, in order: found by
    bisection (a prefix's paths are contiguous), not by a scan of the whole snapshot per path."""
    prefix = wanted + "/"
    start = bisect.bisect_left(ordered, prefix)
    end = bisect.bisect_left(ordered, wanted + "0")  # "0" is the character after "/"
    return ([wanted] if wanted in index else []) + list(ordered[start:end])


def _impact_changeset(
    request: dict[str, Any], baseline: dict[str, Any], index: dict[str, str], ordered: Sequence[str]
) -> dict[str, Any]:
    if "changeset" in request:
        try:
            ChangeSet.model_validate(request["changeset"])
            for change in request["changeset"]["changes"]:
                for path in (change.get("path"), change.get("from")):
                    if path is not None:
                        validate_path(path)
        except (ValidationError, PathError) as exc:
            raise AspError(
                ErrorCode.INVALID_CHANGESET, "malformed changeset", detail=str(exc)[:300]
            ) from None
        return dict(request["changeset"])
    paths = request.get(
        "paths", [request["path"]] if isinstance(request.get("path"), str) else None
    )
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
        raise _invalid("impact needs request.changeset, request.paths or request.path")
    changes = []
    for raw in paths:
        try:
            wanted = validate_path(raw.rstrip("/"))
        except PathError as exc:
            raise _invalid("invalid path", str(exc)[:300]) from None
        matched = _under(ordered, index, wanted)
        if not matched:
            raise _invalid("path is not in the baseline", wanted[:300])
        for path in matched:
            changes.append(
                {"path": path, "kind": "modify", "before": index[path], "after": index[path]}
            )
    if len(changes) > MAX_IMPACT_PATHS:
        raise _invalid(f"impact covers at most {MAX_IMPACT_PATHS} files per request")
    return {"baseline": dict(baseline), "changes": changes}
