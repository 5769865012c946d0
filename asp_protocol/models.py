"""Pydantic models of the ASP objects both sides exchange.

Provider inputs the host must judge (ChangeSet, Assessment, Diagnostic) are closed, as their
schemas are. The outer results are checked for the fields a client relies on and otherwise kept
verbatim, so a newer host's extra fields never break an older client.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from asp_protocol.vocabulary import (
    BLOB_REF_PATTERN,
    AssessmentStatus,
    CallSite,
    CapabilityFamily,
    Comparison,
    Decision,
    DegradationReason,
    LifecycleState,
)
from asp_protocol.wire import Closed, Open

# -- freshness ----------------------------------------------------------------------------------


class Baseline(Closed):
    rev: str
    dirty: str | None = None
    stamped_at: str | None = None


class Change(Closed):
    path: str
    kind: Literal["create", "modify", "delete", "rename"]
    from_: str | None = Field(default=None, alias="from")
    before: str | None = Field(default=None, pattern=BLOB_REF_PATTERN)
    after: str | None = Field(default=None, pattern=BLOB_REF_PATTERN)

    @model_validator(mode="after")
    def _kind_fields(self) -> Change:
        needed = {
            "create": ("after",),
            "modify": ("before", "after"),
            "delete": ("before",),
            "rename": ("from_", "before"),
        }[self.kind]
        missing = [name.rstrip("_") for name in needed if getattr(self, name) is None]
        if missing:
            raise ValueError(f"{self.kind} change of {self.path!r} needs {', '.join(missing)}")
        return self


class ChangeSet(Closed):
    baseline: Baseline
    changes: list[Change]


# -- degradations and authority -----------------------------------------------------------------


class CoverageDegradation(Closed):
    source: str
    reason: DegradationReason
    detail: str
    requirement: str | None = None
    capability: CapabilityFamily | None = None
    provider_state: LifecycleState | None = None


# -- provider output ------------------------------------------------------------------------------


class Position(Closed):
    line: int = Field(ge=0)
    char: int = Field(ge=0)


class Range(Closed):
    start: Position
    end: Position


class Location(Closed):
    path: str
    range: Range | None = None


class Diagnostic(Closed):
    code: str
    severity: Literal["error", "warning", "info"]
    source: str
    message: str
    location: Location
    fingerprint: str
    introduced: bool | None = None
    help: str | None = None
    code_description: dict[str, str] | None = None
    fix: dict[str, Any] | None = None


class CoveragePart(Closed):
    scope: Literal["changeset", "workspace"] | dict[str, list[str]]
    diagnostic_sources: list[str]
    rules: list[str]
    comparison: Comparison


class AssessmentCoverage(Closed):
    requested: CoveragePart
    covered: CoveragePart
    degraded: list[CoverageDegradation]
    unsupported: list[CoverageDegradation]
    exhaustive: bool
    truncated: bool


class AssessmentValidAsOf(Closed):
    baseline: Baseline
    changeset_digest: str
    blobs: list[str]


class AssessmentProvider(Closed):
    id: str = Field(min_length=1)
    version: str = Field(min_length=1)
    config_digest: str = Field(min_length=1)
    capability_version: str = Field(min_length=1)
    build_digest: str | None = None
    artifact_digest: str | None = None
    capability_family: Literal["check"] | None = None


class Timing(Closed):
    started_at: str | None = None
    ended_at: str | None = None
    elapsed_ms: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _has_duration(self) -> Timing:
        if self.elapsed_ms is None and (self.started_at is None or self.ended_at is None):
            raise ValueError("timing needs elapsedMs or both startedAt and endedAt")
        return self


class Cache(Closed):
    status: Literal["hit", "miss", "stale", "disabled"]
    key: str | None = None
    digest: str | None = None
    refreshed_at: str | None = None


class Evidence(Closed):
    kind: Literal["trace", "artifact", "metric", "message", "reference"]
    id: str | None = None
    digest: str | None = None
    uri: str | None = None
    message: str | None = None
    data: dict[str, Any] | None = None


class Assessment(Closed):
    """A check provider's answer: evidence for the host, never a decision."""

    status: AssessmentStatus
    diagnostics: list[Diagnostic]
    coverage: AssessmentCoverage
    valid_as_of: AssessmentValidAsOf
    provider: AssessmentProvider
    timing: Timing
    cache: Cache
    evidence: list[Evidence] | None = None


# -- outer seam ---------------------------------------------------------------------------------


class DecisionCoverage(Open):
    exhaustive: bool
    required: list[str]
    enrolled: list[str]
    ran: list[str]
    degraded: list[dict[str, Any]]


class AuditReceipt(Open):
    receipt_id: str
    issued_at: str
    kind: Literal[
        "status",
        "capabilities",
        "evaluate",
        "inspect",
        "edit-request",
        "apply-attempt",
        "authority-status",
        "provider-failure",
    ]
    host: dict[str, Any]
    request_digest: str
    policy_digest: str
    private_only: Literal[True]
    trust_artifact: Literal[False]


class DecisionEnvelope(Open):
    pass_: bool = Field(alias="pass")
    decision: Decision
    call_site: CallSite
    request_digest: str
    findings: list[dict[str, Any]]
    coverage: DecisionCoverage
    policy_digest: str
    authority_evidence: list[dict[str, Any]]
    valid_as_of: dict[str, Any]
    assurance: dict[str, Any]
    receipt: AuditReceipt

    @model_validator(mode="after")
    def _pass_projects_decision(self) -> DecisionEnvelope:
        if self.pass_ != (self.decision == "allow"):
            raise ValueError("pass must be true exactly when decision is allow")
        return self


class HostInfo(Open):
    name: str
    version: str
    outer_protocol: str
    state: Literal["ready", "degraded", "unavailable"]
    binding_candidate: str


class StatusResult(Open):
    host: HostInfo
    workspace: dict[str, Any]
    policy: dict[str, Any]
    servers: list[dict[str, Any]]
    gates: dict[str, Any]
    capabilities: dict[str, Any]
    assurance_capabilities: list[str]
    receipt: AuditReceipt


class CapabilitiesResult(Open):
    capabilities: dict[str, Any]
    sources: list[dict[str, Any]]
    coverage: dict[str, Any]
    receipt: AuditReceipt


class AuthorityStatusResult(Open):
    policy_activation: Literal["base-active", "candidate-pending", "candidate-approved"]
    policy_digest: str
    providers: list[dict[str, Any]]
    receipt: AuditReceipt


class QueryInspectResult(Open):
    data: dict[str, Any]
    valid_as_of: dict[str, Any]
    coverage: dict[str, Any]
    receipt: AuditReceipt
