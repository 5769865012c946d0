"""Extension tools for clients that cannot send custom methods: evaluate and edit-plan, read-only.

`asp_ext_evaluate_changeset` sends call-site `interactive` or `sweep` only (never `gate`); the
changeset is given inline or taken from the host's private `host/workingChangeset` helper.
`asp_ext_request_edit_plan` asks for a proposal only: nothing is applied or written.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, ToolBinding
from mcp.types import CallToolResult
from pydantic import Field

from bridge import guard, label
from bridge.ext.forward import Forwarded, refused
from bridge.host_outcome import ReportProgress
from bridge.label import LABEL_KEY, Envelope
from bridge.runtime import BridgeRuntime
from bridge.tools import READ_ONLY, runtime

if TYPE_CHECKING:
    from bridge.ext.extension import AspOuterSeamExtension

EVALUATE = "asp_ext_evaluate_changeset"
EDIT_PLAN = "asp_ext_request_edit_plan"
NOTICE = (
    "NON-AUTHORITATIVE (experimental MCP extension dev.asp-mcp-bridge/asp-outer-seam): the result "
    "cannot satisfy a blocking ASP gate."
)
METHOD_NOT_FOUND = -32601
DECISIONS = ("allow", "deny", "indeterminate")

ToolCallSite = Literal["interactive", "sweep"]


def _reporter(ctx: Context) -> ReportProgress:
    return ctx.report_progress


def _answer(
    rt: BridgeRuntime,
    tool: str,
    method: str,
    call_site: str,
    outcome: Forwarded,
    summary: str | None = None,
) -> CallToolResult:
    common: dict[str, Any] = {
        "tool": tool,
        "method": method,
        "call_site": call_site,
        "host": rt.host_identity(),
        "latency_ms": outcome.latency_ms,
        "limits": rt.limits,
        "binding": "mcp-extension",
    }
    if outcome.result is not None:
        return label.success(host_result=outcome.result, summary=summary, **common)
    assert outcome.error is not None
    return label.failure(error=outcome.error, **common)


def _decision_summary(result: dict[str, Any] | None, call_site: str) -> str | None:
    decision = result.get("decision") if isinstance(result, dict) else None
    if decision not in DECISIONS:
        return None
    return (
        f"Host decision: {decision} at call-site {call_site} — advisory information only; an MCP "
        "result never satisfies a gate."
    )


def bindings(ext: AspOuterSeamExtension) -> list[ToolBinding]:
    """The two extension tools, bound to *ext* (its adapter-policy gate and cancellation log)."""

    async def asp_ext_evaluate_changeset(
        ctx: Context,
        callSite: Annotated[
            ToolCallSite, Field(description="interactive or sweep; never gate.")
        ] = "interactive",
        changeset: Annotated[
            dict[str, Any] | None,
            Field(
                description="ASP ChangeSet {baseline, changes}; omitted: the host's working-tree changes."
            ),
        ] = None,
        paths: Annotated[
            list[str] | None, Field(description="Limit the working-tree changeset to these paths.")
        ] = None,
        comparison: Literal["all", "introduced"] | None = None,
    ) -> Annotated[CallToolResult, Envelope]:
        rt = runtime(ctx)
        method = "host/evaluateChangeset"
        started = time.perf_counter()
        outcome = await ext.admit(rt, "evaluate")
        if outcome is not None:
            return _answer(rt, EVALUATE, method, callSite, outcome)
        if changeset is None:
            working = await ext.call(
                rt,
                "host/workingChangeset",
                {"paths": paths} if paths else {},
                call_site=callSite,
                origin=EVALUATE,
                report=None,
            )
            if working.result is None:
                if working.error is not None and working.error.code == METHOD_NOT_FOUND:
                    working = refused(
                        "this host has no host/workingChangeset helper; pass the changeset inline",
                        started,
                    )
                return _answer(rt, EVALUATE, "host/workingChangeset", callSite, working)
            changeset = working.result.get("changeset")
        params: dict[str, Any] = {"callSite": callSite, "changeset": changeset}
        if comparison is not None:
            params["comparison"] = comparison
        reason = guard.refusal(method, params, callSite)
        if reason is not None:
            return _answer(rt, EVALUATE, method, callSite, refused(reason, started))
        outcome = await ext.call(
            rt, method, params, call_site=callSite, origin=EVALUATE, report=_reporter(ctx)
        )
        return _answer(
            rt, EVALUATE, method, callSite, outcome, _decision_summary(outcome.result, callSite)
        )

    async def asp_ext_request_edit_plan(
        ctx: Context,
        operation: Annotated[
            str, Field(min_length=1, max_length=200, description="Edit operation, e.g. rename.")
        ],
        paths: Annotated[list[str], Field(min_length=1, description="Paths the plan may touch.")],
        args: Annotated[dict[str, Any] | None, Field(description="Operation arguments.")] = None,
        baseline: Annotated[
            dict[str, Any] | None,
            Field(description="Baseline {rev}; omitted: the host's committed snapshot."),
        ] = None,
        callSite: ToolCallSite = "interactive",
    ) -> Annotated[CallToolResult, Envelope]:
        rt = runtime(ctx)
        method = "host/requestEditPlan"
        started = time.perf_counter()
        outcome = await ext.admit(rt, "edit-plan")
        if outcome is not None:
            return _answer(rt, EDIT_PLAN, method, callSite, outcome)
        if baseline is None:
            status = await ext.call(
                rt, "host/status", None, call_site=None, origin=EDIT_PLAN, report=None
            )
            if status.result is None:
                return _answer(rt, EDIT_PLAN, "host/status", callSite, status)
            workspace = status.result.get("workspace") or {}
            rev = (workspace.get("baseline") or {}).get("rev")
            baseline = {"rev": rev}
        params: dict[str, Any] = {
            "callSite": callSite,
            "operation": operation,
            "baseline": baseline,
            "scope": {"paths": list(dict.fromkeys(paths))},
        }
        if args is not None:
            params["args"] = args
        reason = guard.refusal(method, params, callSite)
        if reason is not None:
            return _answer(rt, EDIT_PLAN, method, callSite, refused(reason, started))
        outcome = await ext.call(
            rt, method, params, call_site=callSite, origin=EDIT_PLAN, report=_reporter(ctx)
        )
        summary = (
            "A proposal only: nothing was applied or written; apply is never available over MCP."
        )
        return _answer(rt, EDIT_PLAN, method, callSite, outcome, summary)

    def meta(method: str) -> dict[str, Any]:
        return {
            LABEL_KEY: {
                "nonAuthoritative": True,
                "gateEligible": False,
                "binding": "mcp-extension",
                "hostMethod": method,
            }
        }

    return [
        ToolBinding(
            asp_ext_evaluate_changeset,
            meta=meta("host/evaluateChangeset"),
            kwargs={
                "name": EVALUATE,
                "title": "Evaluate a changeset (ASP extension, advisory)",
                "description": "Ask the ASP host to evaluate a changeset at call-site interactive "
                "or sweep (the working-tree changes when none is given). " + NOTICE,
                "annotations": READ_ONLY,
            },
        ),
        ToolBinding(
            asp_ext_request_edit_plan,
            meta=meta("host/requestEditPlan"),
            kwargs={
                "name": EDIT_PLAN,
                "title": "Request an edit plan (ASP extension, proposal only)",
                "description": "Ask the ASP host for an edit plan bound to its baseline. A proposal "
                "only: nothing is applied or written. " + NOTICE,
                "annotations": READ_ONLY,
            },
        ),
    ]
