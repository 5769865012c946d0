"""Judging an `edit/propose` answer before the host caches it: the plan is provider data.

In order: the result shape (`{proposal}` only); direct-write claims; command-like content (keys
such as `command`/`script`/`shellCommand`/`argv` anywhere, or shell-looking strings in the prose
fields); any other host-owned name at any depth; the closed EditPlan schema; the host-issued
proposal id and the session's provider identity; freshness (baseline, `validAsOf.baseline`,
`workspaceEdit.baseline`, and `validAsOf.blobs` only blobs the host served); then every touched
path — clean, inside the requested scope, one touched resource per document change with the same
kind and precondition, `expectedDigest` equal to the baseline's blob, `expectedAbsence` only for
a path the baseline lacks, text-edit `rangeBasis` equal to the expected digest. A failure is a
degradation reason (`malformed`, `direct-write-risk`, `stale`) with a detail; nothing is executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from asp_protocol.changesets import PathError, validate_path
from asp_protocol.edit_plan import EditPlan
from asp_protocol.host_owned import find_host_owned_fields
from asp_protocol.vocabulary import DegradationReason
from reference_host.edit.params import in_scope

DIRECT_WRITE_KEYS = frozenset(
    {"apply", "appliedDirectly", "directWrite", "written", "wroteFiles", "writes"}
)
COMMAND_KEYS = frozenset(
    {"command", "commands", "script", "shellCommand", "shell", "exec", "argv", "cmd", "run"}
)
_SHELL = re.compile(
    r"(\$\(|`[^`]+`|&&|\|\s*(sh|bash)\b|;\s*(rm|sh|bash|curl|wget)\b|"
    r"^\s*(sudo\s+)?(rm|sh|bash|zsh|curl|wget|chmod|chown|mv|cp|dd|mkfs|eval|exec|python3?|"
    r"git|npm|pip|make)\s+-)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class PlanCheck:
    """The accepted plan (wire form), or why it was rejected."""

    plan: dict[str, Any] | None
    reason: DegradationReason | None = None
    detail: str = ""


def _reject(reason: DegradationReason, detail: str) -> PlanCheck:
    return PlanCheck(None, reason, detail[:1000])


def _keys_anywhere(value: Any, names: frozenset[str]) -> list[str]:
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                if key in names:
                    found.append(f"{where}.{key}")
                stack.append((child, f"{where}.{key}"))
        elif isinstance(node, list):
            stack.extend((c, f"{where}[{i}]") for i, c in enumerate(node))
    return sorted(found)


def _prose(plan: dict[str, Any]) -> list[str]:
    """Provider prose the host might show: rationale, warnings, annotation messages, data strings."""
    texts: list[str] = []
    if isinstance(plan.get("rationale"), str):
        texts.append(plan["rationale"])
    warnings = plan.get("warnings")
    texts.extend(w for w in warnings if isinstance(w, str)) if isinstance(warnings, list) else None
    stack: list[Any] = [
        plan.get("annotations"),
        plan.get("refusal"),
        plan.get("error"),
        plan.get("conflictHints"),
    ]
    edit = plan.get("workspaceEdit")
    changes = edit.get("documentChanges") if isinstance(edit, dict) else None
    for change in changes if isinstance(changes, list) else []:
        if isinstance(change, dict):
            stack.append(change.get("annotations"))
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            texts.append(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return texts


def _shape(raw: Any) -> PlanCheck | dict[str, Any]:
    if (
        not isinstance(raw, dict)
        or set(raw) != {"proposal"}
        or not isinstance(raw["proposal"], dict)
    ):
        return _reject("malformed", "edit/propose result must be exactly {proposal: EditPlan}")
    plan: dict[str, Any] = raw["proposal"]
    writes = _keys_anywhere(raw, DIRECT_WRITE_KEYS)
    if writes:
        return _reject(
            "direct-write-risk",
            "provider output claims or requests a direct write: " + ", ".join(writes[:5]),
        )
    commands = _keys_anywhere(raw, COMMAND_KEYS)
    shell = [t for t in _prose(plan) if _SHELL.search(t)]
    if commands or shell:
        where = commands[:5] or [f"shell-like text in {len(shell)} prose field(s)"]
        return _reject(
            "malformed",
            "command-like provider output rejected as data, never executed: " + ", ".join(where),
        )
    owned = find_host_owned_fields(raw)
    if owned:
        return _reject(
            "malformed", "host-owned field(s) in provider output: " + ", ".join(owned[:5])
        )
    return plan


def check_plan(
    raw: Any,
    *,
    proposal_id: str,
    provider_id: str,
    baseline: dict[str, Any],
    scope: list[str],
    index: dict[str, str],
    served: set[str],
) -> PlanCheck:
    """Accept or reject one `edit/propose` result (see the module docstring for the order)."""
    shaped = _shape(raw)
    if isinstance(shaped, PlanCheck):
        return shaped
    plan = shaped
    try:
        model = EditPlan.model_validate(plan)
    except ValidationError as exc:
        item = exc.errors()[0]
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        return _reject("malformed", f"malformed EditPlan: {where}: {item['msg']}")
    if model.proposal_id != proposal_id:
        return _reject("malformed", "EditPlan proposalId is not the host-issued one")
    if model.provider.id != provider_id:
        return _reject("malformed", f"EditPlan provider.id claims {model.provider.id[:80]!r}")
    wanted = {k: baseline[k] for k in ("rev", "dirty") if k in baseline}

    def same(b: Any) -> bool:
        return {k: v for k, v in b.wire().items() if k != "stampedAt"} == wanted

    edit = model.workspace_edit
    if not same(model.baseline) or not same(model.valid_as_of.baseline):
        return _reject("stale", "EditPlan baseline/validAsOf is not the host-issued baseline")
    if edit is not None and not same(edit.baseline):
        return _reject("stale", "workspaceEdit.baseline is not the host-issued baseline")
    unread = sorted(set(model.valid_as_of.blobs) - served)
    if unread:
        return _reject(
            "stale", f"validAsOf.blobs names {len(unread)} blob(s) the host never served"
        )
    problem = _path_problem(plan, scope, index)
    if problem is not None:
        return _reject("malformed", problem)
    return PlanCheck(plan)


def _path_problem(plan: dict[str, Any], scope: list[str], index: dict[str, str]) -> str | None:
    touched = plan["touchedResources"]
    changes = (plan.get("workspaceEdit") or {}).get("documentChanges") or []
    keys = [
        (t["path"], t["kind"], t.get("to"), repr(sorted(t["precondition"].items())))
        for t in touched
    ]
    if len(set(keys)) != len(keys):
        return "touchedResources has duplicates"
    seen_paths: set[str] = set()
    for change in changes:
        key = (
            change["path"],
            change["kind"],
            change.get("to"),
            repr(sorted(change["precondition"].items())),
        )
        if key not in keys:
            return f"document change of {change['path'][:200]!r} has no matching touched resource"
        for path in (change["path"], change.get("to")):
            if path is None:
                continue
            try:
                validate_path(path)
            except PathError as exc:
                return f"path policy: {exc}"[:300]
            if not in_scope(path, scope):
                return f"path policy: {path[:200]!r} is outside the requested scope"
            if path in seen_paths:
                return f"path policy: {path[:200]!r} is changed twice"
            seen_paths.add(path)
        condition = change["precondition"]
        current = index.get(change["path"])
        if "expectedAbsence" in condition:
            if current is not None:
                return f"create of {change['path'][:200]!r} but the baseline already has it"
        elif condition["expectedDigest"] != current:
            return f"expectedDigest of {change['path'][:200]!r} is not the baseline's content"
        if change.get("to") is not None and change["to"] in index:
            return f"{change['kind']} target {change['to'][:200]!r} already exists in the baseline"
        for text_edit in change.get("edits") or []:
            if text_edit["rangeBasis"] != condition.get("expectedDigest"):
                return f"text edit of {change['path'][:200]!r} has a rangeBasis other than its expectedDigest"
    if len(keys) != len(changes):
        return "every touched resource needs exactly one document change"
    return None
