"""Closed models of an EditPlan (edit-plan.schema.json) and its WorkspaceEdit (workspace-edit.schema.json).

An EditPlan is provider output the host must judge before it is cached or applied, so every object
is closed, as the schemas are, and the kind-conditional requirements (create needs `after` and
expected absence, modify an expected digest and exactly one of `edits`/`after`, ...) are enforced
here. Host-owned names at any depth are a separate check (`host_owned.py`); command-like content
and path policy are the host's (`reference_host/edit/plan_checks.py`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from asp_protocol.models import Baseline, Range
from asp_protocol.vocabulary import BLOB_REF_PATTERN, AssessmentStatus
from asp_protocol.wire import Closed

EDIT_CAPABILITY_VERSION = "edit/1.0"
ResourceKind = Literal["create", "modify", "delete", "rename", "move"]


class Precondition(Closed):
    expected_digest: str | None = Field(
        default=None, alias="expectedDigest", pattern=BLOB_REF_PATTERN
    )
    expected_absence: Literal[True] | None = Field(default=None, alias="expectedAbsence")

    @model_validator(mode="after")
    def _exactly_one(self) -> Precondition:
        if (self.expected_digest is None) == (self.expected_absence is None):
            raise ValueError("a precondition has exactly one of expectedDigest, expectedAbsence")
        return self


class TextEdit(Closed):
    range: Range
    range_basis: str = Field(alias="rangeBasis", pattern=BLOB_REF_PATTERN)
    coordinate_system: Literal["utf16"] = Field(alias="coordinateSystem")
    new_text: str = Field(alias="newText")


class Annotation(Closed):
    message: str
    range: Range | None = None
    data: dict[str, Any] | None = None


class DocumentChange(Closed):
    path: str
    kind: ResourceKind
    to: str | None = None
    precondition: Precondition
    after: str | None = Field(default=None, pattern=BLOB_REF_PATTERN)
    edits: list[TextEdit] | None = None
    annotations: list[Annotation] | None = None

    @model_validator(mode="after")
    def _kind_fields(self) -> DocumentChange:
        digest_needed = self.kind != "create"
        if digest_needed and self.precondition.expected_digest is None:
            raise ValueError(f"{self.kind} of {self.path!r} needs precondition.expectedDigest")
        if self.kind == "create" and (
            self.after is None or self.precondition.expected_absence is None
        ):
            raise ValueError(f"create of {self.path!r} needs after and expectedAbsence")
        if self.kind == "modify" and (self.edits is None) == (self.after is None):
            raise ValueError(f"modify of {self.path!r} needs exactly one of edits, after")
        if self.kind in ("rename", "move") and self.to is None:
            raise ValueError(f"{self.kind} of {self.path!r} needs to")
        return self


class WorkspaceEdit(Closed):
    baseline: Baseline
    document_changes: list[DocumentChange] = Field(alias="documentChanges")


class EditProvider(Closed):
    id: str
    version: str
    capability_family: Literal["edit"] = Field(alias="capabilityFamily")
    capability_version: str = Field(min_length=1, alias="capabilityVersion")
    config_digest: str = Field(alias="configDigest")
    build_digest: str | None = Field(default=None, alias="buildDigest")


class EditValidAsOf(Closed):
    baseline: Baseline
    blobs: list[str]


class TouchedResource(Closed):
    path: str
    kind: ResourceKind
    to: str | None = None
    precondition: Precondition


class PlanAnnotation(Closed):
    path: str
    message: str
    range: Range | None = None
    severity: Literal["info", "warning", "error"] | None = None
    data: dict[str, Any] | None = None


class Incomplete(Closed):
    reason: Literal[
        "unresolved-reference",
        "partial-coverage",
        "ambiguous-target",
        "budget-exhausted",
        "provider-limitation",
    ]
    detail: str
    recoverable: bool | None = None


class Unsupported(Closed):
    operation: str
    reason: Literal["operation", "language", "resource-kind", "scope", "capability-version"]
    detail: str
    supported_operations: list[str] | None = Field(default=None, alias="supportedOperations")


class PlanRefusal(Closed):
    reason: Literal[
        "cancelled", "provider-error", "malformed-request", "missing-content", "scope-denied"
    ]
    detail: str
    data: dict[str, Any] | None = None


class PlanError(Closed):
    code: str
    message: str
    data: dict[str, Any] | None = None


class ConflictHint(Closed):
    path: str
    kind: Literal["stale-baseline", "overlap", "missing-precondition", "range-drift"]
    detail: str
    data: dict[str, Any] | None = None


class EditPlan(Closed):
    """A provider's proposal: structured operations and preconditions, never a write or a decision."""

    proposal_id: str = Field(min_length=1, alias="proposalId")
    provider: EditProvider
    status: AssessmentStatus
    baseline: Baseline
    valid_as_of: EditValidAsOf = Field(alias="validAsOf")
    touched_resources: list[TouchedResource] = Field(alias="touchedResources")
    workspace_edit: WorkspaceEdit | None = Field(default=None, alias="workspaceEdit")
    incomplete: Incomplete | None = None
    unsupported: Unsupported | None = None
    refusal: PlanRefusal | None = None
    error: PlanError | None = None
    conflict_hints: list[ConflictHint] | None = Field(default=None, alias="conflictHints")
    annotations: list[PlanAnnotation] | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
    rationale: str | None = None
    warnings: list[str] | None = None

    @model_validator(mode="after")
    def _status_fields(self) -> EditPlan:
        needed = {
            "complete": "workspace_edit",
            "incomplete": "incomplete",
            "unsupported": "unsupported",
            "error": "refusal",
            "cancelled": "refusal",
        }[self.status]
        if getattr(self, needed) is None:
            raise ValueError(f"status {self.status} needs {needed}")
        return self
