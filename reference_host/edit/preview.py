"""`host/proposalPreview` (a private helper, like `host/workingChangeset`): the before and after
text of every file a cached proposal touches, so a client can show a diff without reading files.

Read-only: the before text is the plan's baseline content (by its expected-before digest), the
after text is what `host/applyProposal` would write, computed the same way (`textedits.py`, or the
`after` blob). Only UTF-8 text is returned, each file and the whole answer size-bounded; a file
that is binary or too large is listed with `omitted` saying why. An unknown id is -32602.
"""

from __future__ import annotations

from typing import Any

from asp_protocol.errors import AspError, ErrorCode
from reference_host.context import HostContext
from reference_host.edit.afterstate import text_edits_of
from reference_host.edit.proposals import proposal_receipt
from reference_host.edit.textedits import TextEditError, apply_text_edits
from reference_host.receipts import (
    Clock,
    ReceiptParties,
    ReceiptRequest,
    assurance_block,
    no_coverage,
)

METHOD = "host/proposalPreview"
MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024


def _text(data: bytes | None) -> str | None:
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def proposal_preview(ctx: HostContext, params: dict[str, Any]) -> dict[str, Any]:
    clock = Clock()
    proposal_id = params.get("proposalId")
    cached = ctx.proposals.get(proposal_id) if isinstance(proposal_id, str) else None
    if cached is None:
        raise AspError(ErrorCode.INVALID_PARAMS, "unknown or uncached proposalId")
    state = ctx.workspace.state()
    files: list[dict[str, Any]] = []
    total = 0
    for change in (cached.plan.get("workspaceEdit") or {}).get("documentChanges", []):
        path, kind = change["path"], change["kind"]
        entry: dict[str, Any] = {"path": path, "kind": kind}
        if change.get("to"):
            entry["to"] = change["to"]
        expected = change["precondition"].get("expectedDigest")
        before = ctx.workspace.resolve(expected, [path], state.tree) if expected else None
        after: bytes | None = before
        try:
            if change.get("edits") and before is not None:
                after = apply_text_edits(before, text_edits_of(change))
            elif change.get("after"):
                after = ctx.workspace.resolve(
                    change["after"], [change.get("to") or path], state.tree
                )
        except TextEditError as exc:
            entry["omitted"] = f"text edits do not apply: {exc}"[:300]
            files.append(entry)
            continue
        if kind == "delete":
            after = None
        size = len(before or b"") + len(after or b"")
        before_text, after_text = _text(before), _text(after)
        if (before is not None and before_text is None) or (
            after is not None and after_text is None
        ):
            entry["omitted"] = "binary content"
        elif size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
            entry["omitted"] = "too large for a preview"
        elif expected is not None and before is None:
            entry["omitted"] = "baseline content is no longer available"
        else:
            entry["before"], entry["after"] = before_text, after_text
            total += size
        files.append(entry)
    baseline = dict(cached.baseline)
    policy = ctx.policy_for(state)
    assurance = assurance_block(ctx.assurance_mode)
    parties = ReceiptParties(
        authority_evidence=[],
        provider_ids=[cached.provider_id],
        provenance=[cached.provenance] if cached.provenance else [],
    )
    receipt = proposal_receipt(
        ReceiptRequest(METHOD, params, clock, policy.digest, baseline, assurance),
        cached.plan,
        no_coverage(),
        parties,
    )
    return {"proposalId": cached.proposal_id, "files": files, "receipt": receipt}
