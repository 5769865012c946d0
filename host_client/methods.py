"""The outer-seam methods the client knows, each with the model its result must satisfy."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from asp_protocol.models import (
    AuditReceipt,
    AuthorityStatusResult,
    CapabilitiesResult,
    DecisionEnvelope,
    QueryInspectResult,
    StatusResult,
)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class RequestEditPlanResult(_Open):
    proposal: dict[str, Any]
    receipt: AuditReceipt


class ApplyProposalResult(_Open):
    applied: bool
    proposal_id: str = Field(alias="proposalId")
    baseline_before: dict[str, Any] = Field(alias="baselineBefore")
    assurance: dict[str, Any]
    receipt: AuditReceipt


class WorkingChangesetResult(_Open):
    """Private reference-host helper (non-normative): only its object shape is checked."""


class PutBlobResult(_Open):
    blob_id: str = Field(alias="blobId", pattern=r"^blob:sha256:[0-9a-f]+$")


class PolicyResult(_Open):
    """Private reference-host helper (non-normative): only its object shape is checked."""


RESULT_MODELS: dict[str, type[BaseModel]] = {
    "host/status": StatusResult,
    "host/capabilities": CapabilitiesResult,
    "host/authority/status": AuthorityStatusResult,
    "host/evaluateChangeset": DecisionEnvelope,
    "host/queryInspect": QueryInspectResult,
    "host/requestEditPlan": RequestEditPlanResult,
    "host/applyProposal": ApplyProposalResult,
    "host/workingChangeset": WorkingChangesetResult,
    "host/putBlob": PutBlobResult,
    "host/policy": PolicyResult,
}
