"""A cached plan against the current work tree: expected-before checks (CAS), after bytes, and the
hypothetical ChangeSet the gate judges — all computed before anything is written.

Every touched file's current work-tree bytes must hash to the plan's `expectedDigest` (a create's
path must not exist at all); a mismatch is a conflict naming the path and both digests. After bytes
come from the text edits applied to the current bytes or from the `after` blob (uploaded or in the
baseline); an `after` the host cannot resolve is a missing blob. The after bytes are stored as host
uploads so the gate's check providers can read them through `workspace/readBlob`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from asp_protocol.canonical import blob_id
from reference_host.context import HostContext
from reference_host.edit.params import in_scope
from reference_host.edit.textedits import Edit, TextEditError, apply_text_edits
from reference_host.edit.writer import FileWrite, WriteRefused, check_path
from reference_host.repo.workspace import WorkTreeState


@dataclass
class AfterState:
    """What applying the plan would write, or why it cannot be applied."""

    writes: list[FileWrite] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    refusal: str | None = None  # applyProposalResult refusal.reason
    detail: str = ""
    conflicts: list[dict[str, str]] = field(default_factory=list)


def text_edits_of(change: dict[str, Any]) -> list[Edit]:
    """A document change's text edits as `textedits.Edit`s (shared with the preview helper)."""
    return [
        Edit(
            (e["range"]["start"]["line"], e["range"]["start"]["char"]),
            (e["range"]["end"]["line"], e["range"]["end"]["char"]),
            e["newText"],
        )
        for e in change.get("edits") or []
    ]


def current_bytes(ctx: HostContext, path: str) -> bytes | None:
    """The work-tree bytes of *path* (None when absent); symlinks are refused by the writer."""
    return ctx.workspace.read_work_file(path)


def compute_after_state(
    ctx: HostContext, plan: dict[str, Any], scope: list[str], state: WorkTreeState
) -> AfterState:
    """CAS, path policy and after bytes for every document change of *plan*."""
    out = AfterState()
    root = ctx.workspace.root
    for change in plan["workspaceEdit"]["documentChanges"]:
        path, kind, to = change["path"], change["kind"], change.get("to")
        for rel in (path, to):
            if rel is None:
                continue
            if not in_scope(rel, scope):
                out.refusal, out.detail = "precondition-failed", f"{rel} is outside the scope"
                return out
            try:
                check_path(root, rel)
            except WriteRefused as exc:
                out.refusal, out.detail = "precondition-failed", f"path policy: {exc}"
                return out
        condition = change["precondition"]
        present = os.path.lexists(root / path)
        data = current_bytes(ctx, path) if present else None
        if "expectedAbsence" in condition:
            if present:
                out.conflicts.append(
                    {"path": path, "detail": "expected absence, but the path exists"}
                )
                continue
        else:
            actual = blob_id(data) if data is not None else "absent"
            if actual != condition["expectedDigest"]:
                out.conflicts.append(
                    {
                        "path": path,
                        "detail": f"Expected {condition['expectedDigest']} but current content is {actual}.",
                    }
                )
                continue
        if to is not None and os.path.lexists(root / to):
            out.conflicts.append({"path": to, "detail": f"{kind} target already exists"})
            continue
        after: bytes | None = data
        if change.get("edits"):
            assert data is not None
            try:
                after = apply_text_edits(data, text_edits_of(change))
            except TextEditError as exc:
                out.refusal, out.detail = "malformed", f"text edits of {path}: {exc}"
                return out
        elif change.get("after"):
            after = ctx.workspace.resolve(change["after"], [path, to or path], state.tree)
            if after is None:
                out.refusal, out.detail = "missing-blob", f"after blob of {path} is not available"
                return out
        if kind == "delete":
            out.writes.append(FileWrite(path, None, data))
            out.changes.append({"path": path, "kind": "delete", "before": blob_id(data or b"")})
        elif kind in ("rename", "move"):
            assert to is not None and data is not None and after is not None
            out.writes.append(FileWrite(to, after, None))
            out.writes.append(FileWrite(path, None, data))
            ctx.workspace.put_blob(after)
            out.changes.append(
                {
                    "path": to,
                    "kind": "rename",
                    "from": path,
                    "before": blob_id(data),
                    "after": blob_id(after),
                }
            )
        else:
            assert after is not None
            out.writes.append(FileWrite(path, after, data))
            ctx.workspace.put_blob(after)
            entry = {
                "path": path,
                "kind": "create" if data is None else "modify",
                "after": blob_id(after),
            }
            if data is not None:
                entry["before"] = blob_id(data)
            out.changes.append(entry)
    if out.conflicts:
        out.refusal = "conflict"
        out.detail = f"{len(out.conflicts)} touched path(s) changed since the plan was made"
    return out


def still_unchanged(ctx: HostContext, writes: list[FileWrite]) -> list[str]:
    """Paths whose bytes moved since the after-state was computed (checked just before writing)."""
    moved = []
    for write in writes:
        present = os.path.lexists(ctx.workspace.root / write.path)
        now = current_bytes(ctx, write.path) if present else None
        if now != write.original:
            moved.append(write.path)
    return moved
