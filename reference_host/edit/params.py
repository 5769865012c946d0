"""`host/requestEditPlan` and `host/applyProposal` params intake: the one place bad edit params
become -32602 (outer-host.schema.json requestEditPlanParams / applyProposalParams, both closed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from asp_protocol.changesets import PathError, validate_path
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.vocabulary import CALL_SITES, CallSite

PLAN_KEYS = frozenset({"callSite", "operation", "baseline", "args", "scope", "proposalId"})
APPLY_KEYS = frozenset({"callSite", "proposalId", "intent", "proposal", "edit", "basePolicyDigest"})
INTENTS = ("user", "agent", "harness")
#: The scope sent to a provider when the request names none: the whole workspace.
WHOLE_WORKSPACE = "**"


def _invalid(message: str, detail: str | None = None) -> AspError:
    return AspError(ErrorCode.INVALID_PARAMS, message, detail=detail)


def _object(params: Any, keys: frozenset[str]) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise _invalid("params must be an object")
    unknown = sorted(set(params) - keys)
    if unknown:
        raise _invalid("unknown parameter(s)", ", ".join(unknown)[:200])
    return params


def _call_site(params: dict[str, Any]) -> CallSite:
    call_site = params.get("callSite")
    if call_site not in CALL_SITES:
        raise _invalid("callSite must be interactive, gate or sweep", repr(call_site)[:100])
    return cast(CallSite, call_site)


@dataclass(frozen=True)
class PlanRequest:
    call_site: CallSite
    operation: str
    baseline: dict[str, Any]
    args: dict[str, Any]
    scope: dict[str, Any]
    proposal_id: str | None

    @property
    def scope_paths(self) -> list[str]:
        return list(self.scope["paths"])


def parse_plan_params(params: Any) -> PlanRequest:
    params = _object(params, PLAN_KEYS)
    call_site = _call_site(params)
    operation = params.get("operation")
    if not isinstance(operation, str) or not operation.strip():
        raise _invalid("operation must be a non-empty string")
    baseline = params.get("baseline")
    if (
        not isinstance(baseline, dict)
        or not isinstance(baseline.get("rev"), str)
        or set(baseline) - {"rev", "dirty", "stampedAt"}
    ):
        raise _invalid("baseline must be {rev, dirty?, stampedAt?}")
    args = params.get("args", {})
    if not isinstance(args, dict):
        raise _invalid("args must be an object")
    scope = params.get("scope", {"paths": [WHOLE_WORKSPACE]})
    if not isinstance(scope, dict) or set(scope) - {"paths", "operationProfile"}:
        raise _invalid("scope must be {paths, operationProfile?}")
    paths = scope.get("paths")
    if (
        not isinstance(paths, list)
        or not paths
        or not all(isinstance(p, str) for p in paths)
        or len(set(paths)) != len(paths)
    ):
        raise _invalid("scope.paths must be a non-empty array of unique strings")
    for path in paths:
        if path == WHOLE_WORKSPACE:
            continue
        try:
            validate_path(path.rstrip("/"))
        except PathError as exc:
            raise _invalid("invalid scope path", str(exc)[:300]) from None
    if "operationProfile" in scope and not isinstance(scope["operationProfile"], str):
        raise _invalid("scope.operationProfile must be a string")
    proposal_id = params.get("proposalId")
    if proposal_id is not None and (not isinstance(proposal_id, str) or not proposal_id):
        raise _invalid("proposalId must be a non-empty string")
    scope = {**scope, "paths": [p if p == WHOLE_WORKSPACE else p.rstrip("/") for p in paths]}
    return PlanRequest(call_site, operation, dict(baseline), args, scope, proposal_id)


def in_scope(path: str, scope: list[str]) -> bool:
    """True when *path* is one of the scope paths or under one of them."""
    return any(s == WHOLE_WORKSPACE or path == s or path.startswith(s + "/") for s in scope)


@dataclass(frozen=True)
class ApplyRequest:
    call_site: CallSite
    proposal_id: str
    intent: str
    proposal: dict[str, Any] | None
    edit: dict[str, Any] | None
    base_policy_digest: str | None


def parse_apply_params(params: Any) -> ApplyRequest:
    params = _object(params, APPLY_KEYS)
    call_site = _call_site(params)
    proposal_id = params.get("proposalId")
    if not isinstance(proposal_id, str):
        raise _invalid("proposalId must be a string")
    intent = params.get("intent")
    if intent not in INTENTS:
        raise _invalid("intent must be user, agent or harness", repr(intent)[:100])
    for key in ("proposal", "edit"):
        if key in params and not isinstance(params[key], dict):
            raise _invalid(f"{key} must be an object")
    base = params.get("basePolicyDigest")
    if base is not None and not isinstance(base, str):
        raise _invalid("basePolicyDigest must be a string")
    return ApplyRequest(
        call_site, proposal_id, intent, params.get("proposal"), params.get("edit"), base
    )
