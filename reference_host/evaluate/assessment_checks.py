"""Assessment checks: every provider answer is judged before it may count toward a decision.

Each failed check maps to one degradation reason: forged host-owned fields, schema violations,
identity or `configDigest` mismatches are `malformed`; a `validAsOf` that does not match what the
host issued and served is `stale`. A bad Assessment is degraded coverage, never an allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from asp_protocol.canonical import config_digest
from asp_protocol.host_owned import find_host_owned_fields
from asp_protocol.models import Assessment
from asp_protocol.vocabulary import DegradationReason
from reference_host.coverage import provider_reasons, validation_summary

STATUS_REASONS: dict[str, DegradationReason] = {
    "incomplete": "incomplete",
    "unsupported": "unsupported",
    "error": "error",
    "cancelled": "cancelled",
}


@dataclass
class AssessmentCheck:
    """The host's reading of one Assessment: usable or not, why, and the stamped diagnostics."""

    reason: DegradationReason | None
    detail: str
    assessment: Assessment | None = None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    unnamespaced: set[int] = field(default_factory=set)

    @property
    def complete(self) -> bool:
        return self.reason is None


def _baseline_key(value: Any) -> tuple[Any, Any]:
    if not isinstance(value, dict):
        return (None, None)
    return (value.get("rev"), value.get("dirty"))


def expected_config_digest(provider_id: str, capability_version: str, configuration: Any) -> str:
    """What the provider must report: omitted configuration means `{}` (docs/architecture.md#protocol-map)."""
    return config_digest(
        provider_id, capability_version, configuration if configuration is not None else {}
    )


def validate_assessment(
    raw: Any,
    *,
    provider_id: str,
    declared_sources: list[str],
    capability_version: str,
    configuration: Any,
    expected_digest: str | None = None,
    baseline: dict[str, Any],
    changeset_digest: str,
    served_now: set[str],
    served_ever: set[str],
) -> AssessmentCheck:
    """Run every Assessment check in order and stamp provenance on the diagnostics that survive.

    *expected_digest* replaces the recomputed configDigest for a provider whose digest cannot be
    recomputed (the asp/0.1 profile passes the digest its session first reported).
    """
    forged = find_host_owned_fields(raw)
    if forged:
        shown = ", ".join(forged[:5])
        return AssessmentCheck("malformed", f"assessment carries host-owned field(s): {shown}")
    try:
        assessment = Assessment.model_validate(raw)
    except ValidationError as exc:
        return AssessmentCheck(
            "malformed", f"assessment violates its schema: {validation_summary(exc)}"
        )
    provider = assessment.provider
    if provider.id != provider_id:
        return AssessmentCheck(
            "malformed",
            f"assessment names provider {provider.id[:80]!r}, not {provider_id!r}",
            assessment,
        )
    expected = expected_digest or expected_config_digest(
        provider_id, capability_version, configuration
    )
    if provider.config_digest != expected:
        what = (
            "changed within the session"
            if expected_digest
            else "does not match the configuration sent"
        )
        return AssessmentCheck(
            "malformed", f"provider.configDigest {what} (expected {expected})", assessment
        )
    valid = assessment.valid_as_of
    if _baseline_key(valid.baseline.wire()) != _baseline_key(baseline):
        return AssessmentCheck(
            "stale", "validAsOf.baseline is not the baseline the host issued", assessment
        )
    if valid.changeset_digest != changeset_digest:
        return AssessmentCheck(
            "stale", "validAsOf.changesetDigest is not the digest of the changeset sent", assessment
        )
    claimed = set(valid.blobs)
    never_read = sorted(claimed - served_ever)
    if never_read:
        return AssessmentCheck(
            "stale",
            f"validAsOf.blobs claims {len(never_read)} blob(s) the host never served, e.g. {never_read[0][:80]}",
            assessment,
        )
    unclaimed = sorted(served_now - claimed)
    if unclaimed:
        return AssessmentCheck(
            "stale",
            f"validAsOf.blobs omits {len(unclaimed)} blob(s) the provider read, e.g. {unclaimed[0][:80]}",
            assessment,
        )
    check = AssessmentCheck(STATUS_REASONS.get(assessment.status), "", assessment)
    if check.reason is not None:
        check.detail = f"provider reported status {assessment.status}"
        reasons = provider_reasons(raw.get("coverage") if isinstance(raw, dict) else None)
        if reasons:
            check.detail += f"; {reasons}"
    prefixes = tuple(f"{source}/" for source in declared_sources)
    for index, diagnostic in enumerate(assessment.diagnostics):
        wire = _contain(diagnostic.model_dump(by_alias=True, exclude_none=True))
        wire["source"] = provider_id
        if not diagnostic.code.startswith(prefixes):
            check.unnamespaced.add(index)
        check.diagnostics.append(wire)
    return check


# Host enforcement point 6 (string containment): provider text is data, capped before any agent sees it.
STRING_CAPS = {"message": 2000, "help": 2000, "code": 200}


def _contain(diagnostic: dict[str, Any]) -> dict[str, Any]:
    """Cap the untrusted free-text fields of one diagnostic, saying how much was cut."""
    for key, limit in STRING_CAPS.items():
        value = diagnostic.get(key)
        if isinstance(value, str) and len(value) > limit:
            diagnostic[key] = (
                f"{value[:limit]}…[capped by the host: {len(value) - limit} more chars]"
            )
    return diagnostic
