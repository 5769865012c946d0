"""The one builder of the `host/evaluateChangeset` decision envelope and its receipt.

Both a full evaluation (`evaluation.py`) and the fast-path deny (`fast_path.py`) hand their
`decide()` outcome here, so the 11-key envelope, its `pass` projection and the receipt that mirrors
its coverage are assembled in one place and cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from reference_host.evaluate.decision import Outcome
from reference_host.receipts import (
    ReceiptParties,
    ReceiptRequest,
    assurance_block,
    build_receipt,
)


def evaluation_assurance(mode: str, notes: str = "") -> dict[str, Any]:
    """The assurance block of an evaluation; *notes* (settings in force, mapped asp/0.1 answers)
    extend its `detail`, which the receipt binds too."""
    assurance = assurance_block(mode)
    if notes:
        assurance["detail"] = f"{assurance['detail']}. {notes}"
    return assurance


def decision_envelope(
    request: ReceiptRequest, outcome: Outcome, changeset_digest: str | None
) -> dict[str, Any]:
    """The evaluateChangesetResult for *outcome*, valid as of the baseline's rev and the blobs read.

    `pass` is derived from the decision here and nowhere else; `changesetDigest` is present
    whenever the request carried a ChangeSet the host could digest.
    """
    valid: dict[str, Any] = {"rev": request.baseline["rev"]}
    if outcome.blobs:
        valid["blobs"] = outcome.blobs
    envelope: dict[str, Any] = {
        "pass": outcome.decision == "allow",
        "decision": outcome.decision,
        "callSite": request.call_site,
        "requestDigest": request.digest,
    }
    if changeset_digest is not None:
        envelope["changesetDigest"] = changeset_digest
    envelope.update(
        findings=outcome.findings,
        coverage=outcome.coverage,
        policyDigest=request.policy_digest,
        authorityEvidence=outcome.authority_evidence,
        validAsOf=valid,
        assurance=request.assurance,
        receipt=build_receipt(
            "evaluate",
            request,
            valid,
            outcome.coverage,
            ReceiptParties(
                authority_evidence=outcome.authority_evidence,
                provider_ids=outcome.provider_ids,
                provenance=outcome.provenance,
            ),
            changeset_digest=changeset_digest,
        ),
    )
    return envelope
