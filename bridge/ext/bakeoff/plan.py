"""What both bindings send for a case (identical params), how the host is launched, and outcomes.

One place builds the outer params so the native and MCP runs are byte-for-byte the same request;
the runners only differ in the binding that carries it.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from bridge.ext.bakeoff.workspace import PreparedCase

Binding = Literal["native", "mcp-extension"]
StepKind = Literal["result", "error", "cancelled", "refused", "not-offered", "failed"]
RunStatus = Literal["ran", "not-run", "failed"]

DEFAULT_HOST = f"{shlex.quote(sys.executable)} -m reference_host"
REPO = "{repo}"
TRUSTED = "{trusted_dir}"


def evaluate_params(prepared: PreparedCase) -> dict[str, Any]:
    request = prepared.case.request
    return {
        "callSite": request.call_site,
        "changeset": prepared.changeset,
        **dict(request.extra_params),
    }


def fast_path_params(prepared: PreparedCase) -> dict[str, Any]:
    """A provider-shaped `check/evaluate` request, as a harness bypassing the host would send it."""
    return {"callSite": prepared.case.request.call_site, "changeset": prepared.changeset}


def edit_plan_params(prepared: PreparedCase) -> dict[str, Any]:
    extra = dict(prepared.case.request.extra_params)
    paths = sorted(c["path"] for c in prepared.changeset["changes"]) or ["src/app.py"]
    return {
        "callSite": "interactive",
        "operation": extra.get("operation", "rename"),
        "baseline": prepared.baseline,
        "args": extra.get("args", {}),
        "scope": {"paths": paths},
    }


def apply_params(prepared: PreparedCase, proposal_id: str) -> dict[str, Any]:
    return {
        "callSite": prepared.case.request.call_site,
        "proposalId": proposal_id,
        "intent": "agent",
    }


def host_argv(template: str, prepared: PreparedCase, *, keep_repo_placeholder: bool) -> list[str]:
    """The host command for a case: `{repo}`/`{trusted_dir}` substituted, serve args added if absent.

    The MCP bridge substitutes `{repo}` itself, so for it the placeholder is kept.
    """
    words = shlex.split(template)
    if not any(REPO in w for w in words):
        words += ["serve", "--repo", REPO, "--trusted-dir", TRUSTED]
    words += list(prepared.case.host_args)
    repo = REPO if keep_repo_placeholder else str(prepared.repo)
    return [w.replace(TRUSTED, str(prepared.trusted_dir)).replace(REPO, repo) for w in words]


def edit_unavailable_reason(capabilities: Any) -> str | None:
    """Why the host cannot serve the edit profile, from its own `host/capabilities`; None if it can."""
    try:
        edit = capabilities["capabilities"]["edit"]
    except (KeyError, TypeError):
        return "host/capabilities does not describe the edit family"
    if isinstance(edit, dict) and edit.get("available") is True:
        return None
    return "host reports the edit profile unavailable (capabilities.edit.available is false)"


@dataclass
class Step:
    """One request carried by a binding, and what came back."""

    method: str
    kind: StepKind
    latency_ms: float
    result: Any = None  # the host's result, verbatim (for MCP: the envelope's hostResult)
    error: dict[str, Any] | None = None  # {code, message, failClass, reason?, data?}
    envelope: dict[str, Any] | None = None  # the MCP label envelope, MCP binding only
    cancellation: dict[str, Any] | None = None  # {sent, hostReply}
    progress: int = 0  # progress notifications the client received for this request (MCP only)

    def to_json(self) -> dict[str, Any]:
        return {
            "progress": self.progress,
            "method": self.method,
            "kind": self.kind,
            "latencyMs": round(self.latency_ms, 3),
            "result": self.result,
            "error": self.error,
            "envelope": _envelope_summary(self.envelope),
            "cancellation": self.cancellation,
        }


def _envelope_summary(envelope: dict[str, Any] | None) -> dict[str, Any] | None:
    """The label fields of an envelope without repeating the (already recorded) host result."""
    if envelope is None:
        return None
    return {k: v for k, v in envelope.items() if k != "hostResult"}


@dataclass
class BindingRun:
    """A case carried over one binding: its steps (the last is compared) and the workspace check."""

    binding: Binding
    status: RunStatus = "ran"
    reason: str | None = None
    steps: list[Step] = field(default_factory=list)
    setup: list[Step] = field(default_factory=list)  # warm-up calls (status), label-checked too
    warm: Step | None = None  # the same request again on the warm host (latency only)
    host: dict[str, Any] | None = None
    workspace_unchanged: bool = True
    stderr_tail: str = ""
    variant: str = ""  # MCP only: "<protocol era>/<transport>", e.g. "2025-11-25/stdio"
    advertised_in: list[str] = field(default_factory=list)  # capability fields naming the extension
    retried: str | None = None  # why this run is a second attempt (runner.client_broke_on_cancel)

    @property
    def final(self) -> Step | None:
        return self.steps[-1] if self.steps else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["steps"] = [s.to_json() for s in self.steps]
        data["setup"] = [s.to_json() for s in self.setup]
        data["warm"] = self.warm.to_json() if self.warm else None
        data["workspaceUnchanged"] = data.pop("workspace_unchanged")
        data["stderrTail"] = data.pop("stderr_tail")[-2000:]
        return data
