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


class PutBlobResult(Open):
    blob_id: str = Field(pattern=OUTER_BLOB_REF_PATTERN)


NEVER_SENT = frozenset({"host/applyProposal"})
"""Methods this client refuses to send: the bridge is read-only and never forwards an apply."""

RESULT_MODELS: dict[str, type[BaseModel]] = {
    "host/status": StatusResult,
    "host/capabilities": CapabilitiesResult,
    "host/authority/status": AuthorityStatusResult,
    "host/evaluateChangeset": DecisionEnvelope,
    "host/queryInspect": QueryInspectResult,
    "host/requestEditPlan": RequestEditPlanResult,
    "host/putBlob": PutBlobResult,
}
