"""Extension tools for clients that cannot send custom methods: evaluate and edit-plan, read-only.

`asp_ext_evaluate_changeset` sends call-site `interactive` or `sweep` only (never `gate`); the
changeset is given inline or taken from the host's private `host/workingChangeset` helper.
`asp_ext_request_edit_plan` asks for a proposal only: nothing is applied or written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, ToolBinding
from mcp.types import CallToolResult
from pydantic import Field

from bridge import label
from bridge.adapter_policy import Surface
from bridge.calls import Outcome, admit, refused
from bridge.evaluation import evaluated_paths, evaluation_report, finding_counts, next_step
from bridge.fence import fence
from bridge.host_outcome import ReportProgress
from bridge.label import Envelope
from bridge.runtime import BridgeRuntime
from bridge.summaries import degraded_lines
from bridge.tools import READ_ONLY, runtime
from bridge.tools.inspect_render import text_of

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
FINDINGS_SHOWN = 50
FINDINGS_CHARS = 10_000

ToolCallSite = Literal["interactive", "sweep"]


def _reporter(ctx: Context) -> ReportProgress:
    return ctx.report_progress


def _answer(
    rt: BridgeRuntime,
    tool: str,
    outcome: Outcome,
    summary: str | None = None,
    bridge_result: dict[str, Any] | None = None,
) -> CallToolResult:
    return rt.answer(
        tool, outcome, summary=summary, binding="mcp-extension", bridge_result=bridge_result
    )


async def _admit(
    rt: BridgeRuntime, method: str, call_site: str, surface: Surface
) -> Outcome | None:
    """Admit the tool's surface before any helper call it makes (a refused evaluate reads nothing)."""
    started = time.perf_counter()
    return await admit(rt.client, rt.policy, method, call_site, surface, started, start_host=True)


def _decision_summary(
    result: dict[str, Any] | None,
    call_site: str,
    changeset: Any = None,
    inline: bool = False,
    comparison: str | None = None,
) -> tuple[str, dict[str, Any]] | None:
    """The decision, how many paths were evaluated, the findings as `path:line code message`
    (host text, so the list is fenced and each line capped) and the next step; with the same
    reading as `bridgeResult.evaluation` for clients that show the model only structuredContent."""
    from bridge.migration.findings import parse_host_findings  # with the migration check's code

    decision = result.get("decision") if isinstance(result, dict) else None
    if decision not in DECISIONS or not isinstance(result, dict):
        return None
    findings, unreadable = parse_host_findings(result.get("findings", []))
    raw = result["findings"] if isinstance(result.get("findings"), list) else []
    advisory = {
        i
        for i, item in enumerate(raw)
        if isinstance(item, dict) and item.get("disposition") == "advisory"
    }
    lines = [
        f"{text_of(f.path)}:{f.start.line + 1 if f.start else '?'} {text_of(f.rule, 80)} "
        f"{text_of(f.message)}"
        + (" [advisory: did not count toward the decision]" if f.index in advisory else "")
        for f in findings[:FINDINGS_SHOWN]
    ]
    paths = evaluated_paths(changeset, result)
    counts = finding_counts(result, len(unreadable))
    step = next_step(decision, paths, counts, inline, comparison == "introduced")
    parts = [
        f"Host decision: {decision} at call-site {call_site} — advisory information only; an MCP "
        "result never satisfies a gate.",
        paths.line(),
    ]
    degraded = degraded_lines(result)
    if degraded:
        parts.append("Why the host's coverage is degraded (coverage.degraded):")
        parts.append(fence("\n".join(degraded), label="HOST COVERAGE", total_limit=FINDINGS_CHARS))
    parts += [
        f"Findings ({len(findings)}"
        + (f", {len(unreadable)} unreadable" if unreadable else "")
        + "):"
        if findings or unreadable
        else "Findings: none reported by the host.",
    ]
    if lines:
        more = len(findings) - len(lines)
        listing = "\n".join(lines) + (f"\n(+{more} more in structuredContent)" if more > 0 else "")
        parts.append(fence(listing, label="HOST FINDINGS", total_limit=FINDINGS_CHARS))
    parts.append(step)
    return "\n".join(parts), {
        "evaluation": evaluation_report(decision, call_site, paths, counts, step)
    }


def _plan_summary(result: dict[str, Any]) -> str:
    """What the plan is, in a line: its status and, for a plan that is not complete, why (host
    text, fenced) — an `incomplete` plan with `recoverable: true` is worth asking again."""
    head = "A proposal only: nothing was applied or written; apply is never available over MCP."
    raw = result.get("proposal")
    proposal: dict[str, Any] = raw if isinstance(raw, dict) else {}
    status = proposal.get("status")
    if status == "complete" or not isinstance(status, str):
        return head + (" Plan status: complete." if status == "complete" else "")
    why = next(
        (proposal[k] for k in ("incomplete", "unsupported", "refusal") if k in proposal), None
    )
    why = why if isinstance(why, dict) else {}
    again = " It can be asked again (recoverable)." if why.get("recoverable") is True else ""
    reason = f"{text_of(why.get('reason'), 80)}: {text_of(why.get('detail'))}"
    return f"{head} Plan status: {text_of(status, 40)}, nothing to apply.{again}\n" + fence(
        reason, label="PLAN REASON", total_limit=FINDINGS_CHARS
    )


async def _plan_diff(
    ext: AspOuterSeamExtension, rt: BridgeRuntime, result: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The plan's unified diff from the host's `host/proposalPreview` helper (never from files):
    structured `{text, truncated}` or `{unavailable}`, and the fenced text view."""
    from bridge.ext.plan_diff import unified_diff  # difflib: loaded by the first plan, not a start

    raw = result.get("proposal")
    proposal: dict[str, Any] = raw if isinstance(raw, dict) else {}
    proposal_id = proposal.get("proposalId")
    if proposal.get("status") != "complete" or not isinstance(proposal_id, str):
        return {"unavailable": "the plan is not complete, so there is nothing to show"}, None
    preview = await ext.call(
        rt,
        "host/proposalPreview",
        {"proposalId": proposal_id},
        call_site=None,
        origin=EDIT_PLAN,
        report=None,
    )
    if preview.result is None:
        reason = preview.error.message if preview.error is not None else "no answer"
        return {"unavailable": f"host/proposalPreview failed: {reason}"[:300]}, None
    text, truncated = unified_diff(preview.result)
    body = "```diff\n" + text.replace("```", "`\u200b``") + "```"
    view = fence(body, label="PLAN DIFF", total_limit=rt.limits.total_chars)
    return {
        "text": text,
        "truncated": truncated,
    }, "Unified diff of the plan (not applied):\n" + view


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
        refusal = await _admit(rt, method, callSite, "evaluate")
        if refusal is not None:
            return _answer(rt, EVALUATE, refusal)
        inline = changeset is not None
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
                        "host/workingChangeset",
                        callSite,
                        "this host has no host/workingChangeset helper; pass the changeset inline",
                        started,
                    )
                return _answer(rt, EVALUATE, working)
            changeset = working.result.get("changeset")
        params: dict[str, Any] = {"callSite": callSite, "changeset": changeset}
        if comparison is not None:
            params["comparison"] = comparison
        outcome = await ext.call(
            rt, method, params, call_site=callSite, origin=EVALUATE, report=_reporter(ctx)
        )
        reading = _decision_summary(outcome.result, callSite, changeset, inline, comparison)
        if reading is None:
            return _answer(rt, EVALUATE, outcome)
        return _answer(rt, EVALUATE, outcome, *reading)

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
        refusal = await _admit(rt, method, callSite, "edit-plan")
        if refusal is not None:
            return _answer(rt, EDIT_PLAN, refusal)
        if baseline is None:
            status = await ext.call(
                rt, "host/status", None, call_site=None, origin=EDIT_PLAN, report=None
            )
            if status.result is None:
                return _answer(rt, EDIT_PLAN, status)
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
        outcome = await ext.call(
            rt, method, params, call_site=callSite, origin=EDIT_PLAN, report=_reporter(ctx)
        )
        summary = (
            "A proposal only: nothing was applied or written; apply is never available over MCP."
        )
        if outcome.result is None:
            return _answer(rt, EDIT_PLAN, outcome, summary)
        summary = _plan_summary(outcome.result)
        diff, appendix = await _plan_diff(ext, rt, outcome.result)
        bridge_result = {"diff": diff}
        text = label.success_text(
            EDIT_PLAN,
            method,
            callSite,
            host_result=outcome.result,
            bridge_result=bridge_result,
            limits=rt.limits,
            summary=summary,
        )
        return label.success(
            **rt.outcome_header(EDIT_PLAN, outcome),
            limits=rt.limits,
            binding="mcp-extension",
            host_result=outcome.result,
            bridge_result=bridge_result,
            summary=summary,
            text=text + ("\n" + appendix if appendix else ""),
        )

    return [
        _read_only(
            asp_ext_evaluate_changeset,
            "host/evaluateChangeset",
            EVALUATE,
            "Evaluate a changeset (ASP extension, advisory)",
            "Ask the ASP host to evaluate a changeset at call-site interactive "
            "or sweep (the working-tree changes when none is given). ",
        ),
        _read_only(
            asp_ext_request_edit_plan,
            "host/requestEditPlan",
            EDIT_PLAN,
            "Request an edit plan (ASP extension, proposal only)",
            "Ask the ASP host for an edit plan bound to its baseline. A proposal "
            "only: nothing is applied or written. ",
        ),
    ]


def _read_only(
    tool: Callable[..., Any], method: str, name: str, title: str, description: str
) -> ToolBinding:
    """An extension tool binding: read-only, its description ending in the advisory notice."""
    return ToolBinding(
        tool,
        meta=label.tool_meta("mcp-extension", method),
        kwargs={
            "name": name,
            "title": title,
            "description": description + NOTICE,
            "annotations": READ_ONLY,
        },
    )
