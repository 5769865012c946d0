"""The gate decision over a hypothetical after-state: the one door from apply to evaluation.

`host/applyProposal` must judge "baseline plus this plan" by exactly the rules that judge any
candidate at the `gate` call-site — the same policy, providers, freshness, authority and
assurance — so it asks the evaluation feature for a full Decision envelope instead of
re-implementing any of it. This narrow function is the only thing the edit package uses from
evaluation; it keeps `edit/` from importing the `evaluate/` package directly.

The after-state is judged with comparison `introduced`: an apply is refused for what the edit
brings, not for a finding that was in a touched file before it (IPython's injected `get_ipython`
in rich's console.py refused every rename touching that file). Refusing the edit would not remove
such a finding; a gate over the whole change still sees it.
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
    params = {"callSite": "gate", "changeset": changeset, "comparison": "introduced"}
    return await evaluate_changeset(ctx, params, rpc)
