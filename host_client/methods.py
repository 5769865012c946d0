"""The outer-seam methods the client knows, each with the model its result must satisfy."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from asp_protocol.models import (
    AuditReceipt,
    AuthorityStatusResult,
    CapabilitiesResult,
    DecisionEnvelope,
    QueryInspectResult,
    StatusResult,
)
from asp_protocol.vocabulary import OUTER_BLOB_REF_PATTERN
from asp_protocol.wire import Open


class RequestEditPlanResult(Open):
    proposal: dict[str, Any]
    receipt: AuditReceipt


class ApplyProposalResult(Open):
    applied: bool
    proposal_id: str
    baseline_before: dict[str, Any]
    assurance: dict[str, Any]
    receipt: AuditReceipt


class WorkingChangesetResult(Open):
    """Private reference-host helper (non-normative): only its object shape is checked."""


class PutBlobResult(Open):
    blob_id: str = Field(pattern=OUTER_BLOB_REF_PATTERN)


class PolicyResult(Open):
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
