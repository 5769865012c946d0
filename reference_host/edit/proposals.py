"""The host's cache of validated edit proposals, keyed by host-issued proposal id.

`host/requestEditPlan` stores each plan it accepted with the baseline and scope it was asked for;
`host/applyProposal` looks proposals up here and refuses any id it does not find (unknown,
evicted, or never accepted). The cache is bounded (oldest evicted first) and lives only as long
as the host process. `apply_lock` serializes every apply in the workspace, so of two concurrent
applies touching the same file only the first can pass its expected-before digests.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio

from reference_host.receipts import ReceiptParties, ReceiptRequest, build_receipt

MAX_PROPOSALS = 64


@dataclass
class CachedProposal:
    """An accepted plan and what it was bound to when the host accepted it."""

    proposal_id: str
    provider_id: str
    plan: dict[str, Any]
    baseline: dict[str, Any]
    scope: list[str]
    call_site: str
    provenance: dict[str, Any]
    applied: bool = False


@dataclass
class ProposalStore:
    """Bounded proposal cache plus the one apply lock of the workspace."""

    entries: OrderedDict[str, CachedProposal] = field(default_factory=OrderedDict)
    apply_lock: anyio.Lock = field(default_factory=anyio.Lock)

    def issue_id(self, wanted: str | None) -> str:
        """The proposal id to send the provider: the caller's (if unused) or a fresh host id."""
        if wanted is not None and wanted not in self.entries:
            return wanted
        return f"proposal:{uuid.uuid4().hex}"

    def add(self, proposal: CachedProposal) -> None:
        self.entries[proposal.proposal_id] = proposal
        while len(self.entries) > MAX_PROPOSALS:
            self.entries.popitem(last=False)

    def get(self, proposal_id: str) -> CachedProposal | None:
        return self.entries.get(proposal_id)


def proposal_receipt(
    request: ReceiptRequest, plan: dict[str, Any], coverage: dict[str, Any], parties: ReceiptParties
) -> dict[str, Any]:
    """The `edit-request` receipt of a plan or of its preview.

    Both answer about the same proposal, so both are valid as of the plan's baseline and the blobs
    the plan named; building them in one place keeps the two receipts comparable.
    """
    valid_as_of = {"rev": request.baseline["rev"], "blobs": list(plan["validAsOf"]["blobs"])}
    return build_receipt(
        "edit-request",
        request,
        valid_as_of,
        coverage,
        parties,
        capability_family="edit",
        proposal_id=plan["proposalId"],
    )
