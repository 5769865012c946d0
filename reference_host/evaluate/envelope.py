"""The one builder of the `host/evaluateChangeset` decision envelope and its receipt.

Both a full evaluation (`evaluation.py`) and the fast-path deny (`fast_path.py`) hand their
`decide()` outcome here, so the 11-key envelope, its `pass` projection and the receipt that mirrors
its coverage are assembled in one place and cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from asp_protocol.vocabulary import CallSite
from reference_host.context import HostContext
from reference_host.evaluate.decision import Outcome
from reference_host.receipts import (
    Clock,
    ReceiptParties,
    ReceiptRequest,
    assurance_block,
    build_receipt,
)


def decision_envelope(
    ctx: HostContext,
    outcome: Outcome,
    *,
    clock: Clock,
    method: str,
    raw_params: Any,
    call_site: CallSite,
    policy_digest: str,
    baseline: dict[str, Any],
    changeset_digest: str | None,
    notes: str = "",
) -> dict[str, Any]:
    """The evaluateChangesetResult for *outcome*, valid as of *baseline*'s rev and the blobs read.

    `pass` is derived from the decision here and nowhere else; `changesetDigest` is present
    whenever the request carried a ChangeSet the host could digest. *notes* (settings in force,
    mapped asp/0.1 answers) extend `assurance.detail`, which the receipt binds too.
    """
    valid: dict[str, Any] = {"rev": baseline["rev"]}
    if outcome.blobs:
        valid["blobs"] = outcome.blobs
    assurance = assurance_block(ctx.assurance_mode)
    if notes:
        assurance["detail"] = f"{assurance['detail']}. {notes}"
    request = ReceiptRequest(method, raw_params, clock, policy_digest, baseline, assurance)
    envelope: dict[str, Any] = {
        "pass": outcome.decision == "allow",
        "decision": outcome.decision,
        "callSite": call_site,
        "requestDigest": request.digest,
    }
    if changeset_digest is not None:
        envelope["changesetDigest"] = changeset_digest
    envelope.update(
        findings=outcome.findings,
        coverage=outcome.coverage,
        policyDigest=policy_digest,
        authorityEvidence=outcome.authority_evidence,
        validAsOf=valid,
        assurance=assurance,
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
            call_site=call_site,
            changeset_digest=changeset_digest,
        ),
    )
    return envelope
