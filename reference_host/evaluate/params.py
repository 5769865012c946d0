"""`host/evaluateChangeset` params intake: the one place bad outer params become -32602 / -32013."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asp_protocol.changesets import parse_changeset
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.vocabulary import CALL_SITES, CallSite

METHOD = "host/evaluateChangeset"
PARAM_KEYS = frozenset({"callSite", "changeset", "comparison", "timeoutMs", "basePolicyDigest"})


@dataclass(frozen=True)
class EvaluateRequest:
    call_site: CallSite
    changeset: dict[str, Any]
    comparison: str
    timeout_ms: int | None
    base_policy_digest: str | None


def parse_params(params: Any) -> EvaluateRequest:
    """Bad params are -32602 (input); a malformed ChangeSet or path is -32013."""
    if not isinstance(params, dict):
        raise AspError(ErrorCode.INVALID_PARAMS, "params must be an object")
    unknown = sorted(set(params) - PARAM_KEYS)
    if unknown:
        raise AspError(
            ErrorCode.INVALID_PARAMS, "unknown parameter(s)", detail=", ".join(unknown)[:200]
        )
    call_site = params.get("callSite")
    if call_site not in CALL_SITES:
        raise AspError(
            ErrorCode.INVALID_PARAMS,
            "callSite must be interactive, gate or sweep",
            detail=repr(call_site)[:100],
        )
    comparison = params.get("comparison", "all")
    if comparison not in ("all", "introduced"):
        raise AspError(ErrorCode.INVALID_PARAMS, "comparison must be all or introduced")
    timeout = params.get("timeoutMs")
    if timeout is not None and (
        not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1
    ):
        raise AspError(ErrorCode.INVALID_PARAMS, "timeoutMs must be a positive integer")
    base = params.get("basePolicyDigest")
    if base is not None and not isinstance(base, str):
        raise AspError(ErrorCode.INVALID_PARAMS, "basePolicyDigest must be a string")
    if "changeset" not in params:
        raise AspError(ErrorCode.INVALID_PARAMS, "changeset is required")
    changeset = params["changeset"]
    parse_changeset(changeset, outer_blob_ids=True)
    return EvaluateRequest(call_site, changeset, comparison, timeout, base)
