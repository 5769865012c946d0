"""`check/evaluate` request parsing and Assessment assembly shared by the built-in check providers.

Parsing is strict (check-evaluate.schema.json is closed): unknown members and wrong types are
-32602 (failClass input), a malformed ChangeSet is -32013. Builders produce exactly the shapes of
check-assessment.schema.json so a provider cannot drift from the schema by hand-writing dicts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from asp_protocol import ASP_LEGACY_PROTOCOL_VERSION, CHECK_CAPABILITY_VERSION
from asp_protocol.canonical import changeset_digest
from asp_protocol.changesets import parse_changeset
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.models import Change

EVALUATE_KEYS = frozenset(
    {
        "changeset",
        "scope",
        "comparison",
        "configuration",
        "diagnosticSources",
        "rules",
        "priorDiagnostics",
        "priorAssessments",
    }
)
COMPARISONS = ("introduced", "all", "resolved")


@dataclass(frozen=True)
class EvaluateRequest:
    """A validated `check/evaluate` request; `changeset` is kept exactly as received for its digest."""

    params: dict[str, Any]
    changeset: dict[str, Any]
    changes: list[Change]
    scope: Any
    comparison: str
    diagnostic_sources: list[str] | None
    rules: list[str] | None
    changeset_digest: str

    @property
    def baseline(self) -> dict[str, Any]:
        baseline: dict[str, Any] = self.changeset["baseline"]
        return baseline


def _invalid(message: str, detail: str | None = None) -> AspError:
    return AspError(ErrorCode.INVALID_PARAMS, message, detail=detail)


def _string_set(params: dict[str, Any], key: str) -> list[str] | None:
    value = params.get(key)
    if value is None and key not in params:
        return None
    if (
        not isinstance(value, list)
        or not all(isinstance(v, str) and v for v in value)
        or len(set(value)) != len(value)
    ):
        raise _invalid(f"{key} must be an array of unique non-empty strings")
    return list(value)


def parse_evaluate(params: Any, *, protocol_version: str) -> EvaluateRequest:
    """Validate check/evaluate params; `callSite` is accepted only from an asp/0.1 host (docs/architecture.md#policy-and-authority)."""
    if not isinstance(params, dict):
        raise _invalid("check/evaluate params must be an object")
    allowed = EVALUATE_KEYS | (
        {"callSite"} if protocol_version == ASP_LEGACY_PROTOCOL_VERSION else frozenset()
    )
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise _invalid("unknown check/evaluate member(s)", ", ".join(unknown)[:200])
    for key in ("changeset", "scope", "comparison"):
        if key not in params:
            raise _invalid(f"check/evaluate needs {key}")
    raw_changeset = params["changeset"]
    changeset = parse_changeset(raw_changeset)
    scope = params["scope"]
    if scope not in ("changeset", "workspace"):
        paths = scope.get("paths") if isinstance(scope, dict) and set(scope) == {"paths"} else None
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise _invalid("scope must be changeset, workspace or {paths: [...]}")
    comparison = params["comparison"]
    if comparison not in COMPARISONS:
        raise _invalid("comparison must be introduced, all or resolved")
    for key in ("priorDiagnostics", "priorAssessments"):
        if key in params and not isinstance(params[key], list):
            raise _invalid(f"{key} must be an array")
    return EvaluateRequest(
        params=params,
        changeset=raw_changeset,
        changes=changeset.changes,
        scope=scope,
        comparison=comparison,
        diagnostic_sources=_string_set(params, "diagnosticSources"),
        rules=_string_set(params, "rules"),
        changeset_digest=changeset_digest(raw_changeset),
    )


def coverage_part(
    scope: Any, sources: list[str], rules: list[str], comparison: str
) -> dict[str, Any]:
    return {"scope": scope, "diagnosticSources": sources, "rules": rules, "comparison": comparison}


def degradation(
    source: str, reason: str, detail: str, *, requirement: str | None = None
) -> dict[str, Any]:
    """A coverageDegradation entry about this provider's own coverage."""
    entry: dict[str, Any] = {"source": source, "reason": reason, "detail": detail[:500]}
    if requirement is not None:
        entry["requirement"] = requirement
    entry["capability"] = "check"
    return entry


class Stopwatch:
    """Wall-clock start/end stamps plus a monotonic elapsed time for the Assessment's `timing`."""

    def __init__(self) -> None:
        self.started_at = datetime.now(UTC)
        self._start = time.perf_counter()

    def timing(self) -> dict[str, Any]:
        elapsed = max(0, round((time.perf_counter() - self._start) * 1000))
        return {
            "startedAt": _iso(self.started_at),
            "endedAt": _iso(datetime.now(UTC)),
            "elapsedMs": elapsed,
        }


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def provider_block(
    provider_id: str, version: str, config_digest: str, build: str
) -> dict[str, Any]:
    return {
        "id": provider_id,
        "version": version,
        "configDigest": config_digest,
        "capabilityVersion": CHECK_CAPABILITY_VERSION,
        "buildDigest": build,
        "capabilityFamily": "check",
    }


def build_assessment(
    *,
    status: str,
    diagnostics: list[dict[str, Any]],
    requested: dict[str, Any],
    covered: dict[str, Any],
    degraded: list[dict[str, Any]],
    unsupported: list[dict[str, Any]],
    exhaustive: bool,
    truncated: bool,
    request: EvaluateRequest,
    blobs: list[str],
    provider: dict[str, Any],
    timing: dict[str, Any],
    cache: dict[str, Any],
    evidence: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One Assessment (check-assessment.schema.json); `validAsOf.baseline` echoes the request's."""
    assessment: dict[str, Any] = {
        "status": status,
        "diagnostics": diagnostics,
        "coverage": {
            "requested": requested,
            "covered": covered,
            "degraded": degraded,
            "unsupported": unsupported,
            "exhaustive": exhaustive,
            "truncated": truncated,
        },
        "validAsOf": {
            "baseline": request.baseline,
            "changesetDigest": request.changeset_digest,
            "blobs": list(dict.fromkeys(blobs)),
        },
        "provider": provider,
        "timing": timing,
        "cache": cache,
    }
    if evidence:
        assessment["evidence"] = evidence
    return assessment
