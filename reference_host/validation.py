"""The gate decision over a hypothetical after-state: the one door from apply to evaluation.

`host/applyProposal` must judge "baseline plus this plan" by exactly the rules that judge any
candidate at the `gate` call-site — the same policy, providers, freshness, authority and
assurance — so it asks the evaluation feature for a full Decision envelope instead of
re-implementing any of it. This narrow function is the only thing the edit package uses from
evaluation; it keeps `edit/` from importing the `evaluate/` package directly.
"""

from __future__ import annotations

from typing import Any

from asp_protocol.jsonrpc import RequestContext
from reference_host.context import HostContext
from reference_host.evaluate.evaluation import evaluate_changeset


async def gate_decision(
    ctx: HostContext, changeset: dict[str, Any], rpc: RequestContext | None
) -> dict[str, Any]:
    """The host Decision envelope for *changeset* at call-site `gate` (never writes)."""
    return await evaluate_changeset(ctx, {"callSite": "gate", "changeset": changeset}, rpc)
