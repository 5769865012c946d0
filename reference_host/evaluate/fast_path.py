"""The deny a harness gets for calling a provider method (`check/evaluate`, `judge/evaluate`) on the
host instead of `host/evaluateChangeset` (CORE-NO-LATTICE-FAST-PATH).

No provider runs: the attempt itself is a host-level `lattice-fast-path` degradation for every
requirement of the call-site, and `decide()` turns it into the deny like any other evaluation.
"""

from __future__ import annotations

from typing import Any

from asp_protocol.canonical import changeset_digest
from asp_protocol.vocabulary import CALL_SITES, CallSite
from reference_host.context import HostContext
from reference_host.coverage import degradation
from reference_host.evaluate.decision import decide
from reference_host.evaluate.envelope import decision_envelope, evaluation_assurance
from reference_host.receipts import Clock, ReceiptRequest


def fast_path_envelope(ctx: HostContext, method: str, params: Any) -> dict[str, Any]:
    """The decision envelope for provider method *method* called on the host."""
    clock = Clock()
    state = ctx.workspace.state()
    policy = ctx.policy_for(state)
    site = params.get("callSite") if isinstance(params, dict) else None
    call_site: CallSite = site if site in CALL_SITES else "gate"
    required = policy.required_ids(call_site)
    detail = (
        f"harness called provider method {method} on the host instead of host/evaluateChangeset"
    )
    attempt = [
        degradation(method, "lattice-fast-path", detail, requirement=r) for r in required
    ] or [degradation(method, "lattice-fast-path", detail)]
    changeset = params.get("changeset") if isinstance(params, dict) else None
    assurance = evaluation_assurance(ctx.assurance_mode)
    request = ReceiptRequest(
        method, params, clock, policy.digest, state.baseline(), assurance, call_site
    )
    digest = changeset_digest(changeset) if isinstance(changeset, dict) else None
    return decision_envelope(request, decide(call_site, required, [], attempt), digest)
