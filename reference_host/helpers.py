"""The host's private helper methods: `host/workingChangeset`, `host/putBlob` and `host/policy`."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from asp_protocol.changesets import PathError, validate_path
from asp_protocol.errors import AspError, ErrorCode
from reference_host.context import HostContext
from reference_host.receipts import (
    Clock,
    ReceiptRequest,
    assurance_block,
    build_receipt,
    no_coverage,
)
from reference_host.repo.submodules import left_out
from reference_host.repo.workspace import WorkTreeState

MAX_UPLOAD_BYTES = 16 * 1024 * 1024


def _helper_receipt(
    ctx: HostContext, method: str, params: Any, clock: Clock, state: WorkTreeState | None = None
) -> dict[str, Any]:
    """*state*: the reading the answer was made from (else one is taken: a `git status`)."""
    state = state if state is not None else ctx.workspace.state()
    policy = ctx.policy_for(state)
    baseline = state.baseline()
    assurance = assurance_block(ctx.assurance_mode)
    request = ReceiptRequest(method, params, clock, policy.digest, baseline, assurance)
    return build_receipt("status", request, {"rev": baseline["rev"]}, no_coverage())


def working_changeset(ctx: HostContext, params: dict[str, Any]) -> dict[str, Any]:
    """Private helper: the work tree's changes against HEAD, with the `{rev}` baseline."""
    clock = Clock()
    paths = params.get("paths")
    if paths is not None:
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise AspError(ErrorCode.INVALID_PARAMS, "paths must be an array of strings")
        try:
            paths = [validate_path(p.rstrip("/")) for p in paths]
        except PathError as exc:
            raise AspError(
                ErrorCode.INVALID_PARAMS, "invalid path", detail=str(exc)[:300]
            ) from None
    workspace = ctx.workspace
    state = workspace.state()
    if state.unusable is not None:
        raise AspError(
            ErrorCode.HEALTH_NOT_READY,
            "git cannot be used in this workspace: no change against HEAD can be read",
            detail=state.unusable[:300],
        )
    if not state.vcs:
        raise AspError(
            ErrorCode.INVALID_PARAMS,
            "no version control: pass the change inline",
            detail="the workspace is not a git work tree, so there is no change against HEAD",
        )
    baseline = {"rev": state.rev}
    changes = []
    wanted = sorted(state.differing)
    if paths is not None:
        wanted = [w for w in wanted if any(w == p or w.startswith(p + "/") for p in paths)]
    head_ids = workspace.blob_ids_of([state.head_sha1[p] for p in wanted if p in state.head_sha1])
    for path in wanted:
        after = state.differing[path]
        before = head_ids.get(state.head_sha1[path]) if path in state.head_sha1 else None
        if before is None and after is not None:
            changes.append({"path": path, "kind": "create", "after": after})
        elif after is None and before is not None:
            changes.append({"path": path, "kind": "delete", "before": before})
        elif before is not None and after is not None:
            changes.append({"path": path, "kind": "modify", "before": before, "after": after})
    result: dict[str, Any] = {
        "baseline": baseline,
        "changeset": {"baseline": dict(baseline), "changes": changes},
        "receipt": _helper_receipt(ctx, "host/workingChangeset", params, clock, state),
    }
    left = left_out(workspace, state)
    if left:
        result["uncarried"] = [
            {"path": path, "reason": reason} for path, reason in sorted(left.items())
        ][:200]
    return result


def put_blob(ctx: HostContext, params: dict[str, Any]) -> dict[str, Any]:
    """Private helper: keep uploaded candidate content in host memory and return its blob id."""
    clock = Clock()
    data = params.get("bytes")
    encoding = params.get("encoding", "utf-8")
    if not isinstance(data, str) or encoding not in ("utf-8", "base64"):
        raise AspError(
            ErrorCode.INVALID_PARAMS, "putBlob needs string bytes and encoding utf-8 or base64"
        )
    try:
        raw = data.encode("utf-8") if encoding == "utf-8" else base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise AspError(
            ErrorCode.INVALID_PARAMS, "bytes do not decode with the given encoding"
        ) from None
    if len(raw) > MAX_UPLOAD_BYTES:
        raise AspError(ErrorCode.INVALID_PARAMS, "blob too large")
    identity = ctx.workspace.put_blob(raw)
    return {
        "blobId": identity,
        "receipt": _helper_receipt(ctx, "host/putBlob", {"encoding": encoding}, clock),
    }


def policy_info(ctx: HostContext, params: dict[str, Any]) -> dict[str, Any]:
    """Private helper: the effective policy object, its source, digest and activation."""
    state = ctx.workspace.state()
    policy = ctx.policy_for(state)
    result: dict[str, Any] = {
        "policy": policy.document,
        "source": policy.source,
        "policyDigest": policy.digest,
        "activation": policy.activation,
    }
    if policy.error:
        result["detail"] = policy.error
    return result
