"""Migration family: `asp_migration_check` — can what an agent used before be served by the ASP host?

Coverage comes from `host/capabilities` + `host/status`; parity (when old-tool findings are given)
from one interactive `host/evaluateChangeset` on the inline change or, when omitted, on the
host's private `host/workingChangeset` helper. Every host call goes through the one forwarding
path (`bridge.calls.call_host`: guard, adapter policy, error mapping) and the report is
labelled once. The result is the usual label
envelope: `hostResult` is the last host result verbatim (the decision when parity ran),
`bridgeResult.migrationCheck` the report (`replacementClaimed: false`), and
`bridgeResult.hostResults` the other host results verbatim.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field, ValidationError

from asp_protocol.errors import ErrorCode
from asp_protocol.models import ChangeSet
from bridge import label
from bridge.calls import Outcome
from bridge.fence import fence
from bridge.label import Envelope
from bridge.runtime import BridgeRuntime
from bridge.tools import ToolSpec, runtime

# The check itself (bridge/migration/: findings, coverage, matching, parity, the report) is
# imported by the first check, not by a start: registering the tool needs only its signature, and
# loading the check is ~40 ms of a start that answers `initialize` and `asp_status` first.
if TYPE_CHECKING:
    from bridge.migration.findings import FindingsInput
    from bridge.migration.parity import ParityOptions
    from bridge.migration.report import MigrationReport, ParitySection

TOOL = "asp_migration_check"
WORKING_CHANGESET: Literal["host/workingChangeset"] = "host/workingChangeset"
NO_HELPER = (
    "the host does not offer the private host/workingChangeset helper (only the reference host "
    "does); pass the change inline as `changeset` to run parity"
)


@dataclass
class _Calls:
    """Host results gathered during one check, in call order, verbatim."""

    results: dict[str, Any] = field(default_factory=dict)
    last: str | None = None


async def _host(
    state: BridgeRuntime, ctx: Context | None, calls: _Calls, method: str, params: Any = None
) -> tuple[dict[str, Any] | None, Outcome]:
    """One guarded host call (unlabelled: the check labels its whole report once).

    A `None` result means the outcome is an error."""
    outcome = await state.call(ctx, tool=TOOL, method=method, params=params)
    if outcome.result is None:
        return None, outcome
    calls.results[method] = outcome.result
    calls.last = method
    return outcome.result, outcome


def _why(method: str, outcome: Outcome) -> str:
    error = outcome.error
    if error is None:
        return f"{method} failed (error): no detail"
    code = f", ASP code {error.code}" if error.code is not None else ""
    fail_class = f", failClass {error.fail_class}" if error.fail_class else ""
    message = error.message[:300]
    return f"{method} failed ({error.reason}{code}{fail_class}): {message}"


def _change_paths(changeset: ChangeSet) -> tuple[str, ...]:
    paths = {c.path for c in changeset.changes} | {c.from_ for c in changeset.changes if c.from_}
    return tuple(sorted(paths))


async def _parity(
    state: BridgeRuntime,
    ctx: Context,
    calls: _Calls,
    old: FindingsInput,
    inline: ChangeSet | None,
    paths: list[str] | None,
    comparison: Literal["all", "introduced"],
    options: ParityOptions,
) -> ParitySection:
    from bridge.migration.matching import ParityTooLarge
    from bridge.migration.parity import parity_from_decision
    from bridge.migration.report import ParitySection

    base: dict[str, Any] = {
        "comparison": comparison,
        "findings_format": old.format,
        "old_tools": old.tools,
    }
    changeset = inline
    source: Literal["inline", "host/workingChangeset"] = "inline"
    if changeset is None:
        source = WORKING_CHANGESET
        working, outcome = await _host(
            state, None, calls, WORKING_CHANGESET, {"paths": paths} if paths else {}
        )
        if working is None:
            if outcome.error is not None and outcome.error.code == ErrorCode.METHOD_NOT_FOUND.code:
                return ParitySection(ran=False, reason=NO_HELPER, **base)
            return ParitySection(ran=False, reason=_why(WORKING_CHANGESET, outcome), **base)
        try:
            changeset = ChangeSet.model_validate(working.get("changeset"))
        except ValidationError as exc:
            return ParitySection(
                ran=False,
                reason=f"{WORKING_CHANGESET} returned no valid changeset: {exc.errors()[0]['msg']}",
                changeset_source=source,
                **base,
            )
    changed = _change_paths(changeset)
    if not changeset.changes:
        return ParitySection(
            ran=False,
            reason="the change is empty (the work tree matches HEAD): there is nothing to evaluate; "
            "edit files or pass a changeset",
            changeset_source=source,
            **base,
        )
    params = {"callSite": "interactive", "changeset": changeset.wire(), "comparison": comparison}
    decision, outcome = await _host(state, ctx, calls, "host/evaluateChangeset", params)
    if decision is None:
        return ParitySection(
            ran=False,
            reason=_why("host/evaluateChangeset", outcome),
            changeset_source=source,
            change_paths=changed,
            **base,
        )
    # Matching is CPU work: off the event loop, in a worker thread that checks every few thousand
    # steps whether the call was cancelled or ran past the per-call deadline, and stops there.
    with anyio.move_on_after(state.settings.timeout) as deadline:
        try:
            result, evaluation = await anyio.to_thread.run_sync(
                functools.partial(
                    parity_from_decision,
                    old.findings,
                    decision,
                    options=options,
                    change_paths=changed,
                    repo_root=_repo_root(state),
                    checkpoint=anyio.from_thread.check_cancelled,
                )
            )
        except ParityTooLarge as exc:
            raise Refusal(str(exc)) from None
    if deadline.cancelled_caught:
        raise Refusal(
            f"parity matching did not finish within the per-call deadline ({state.settings.timeout}"
            " s); shrink `findings` (one file or rule at a time) or narrow the change (`paths`)"
        )
    return ParitySection(
        ran=True,
        changeset_source=source,
        change_paths=changed,
        host_evaluation=evaluation,
        result=result,
        **base,
    )


class Refusal(Exception):
    """The check cannot be answered as asked; the message says which input to shrink or fix."""


def _repo_root(state: BridgeRuntime) -> str | None:
    repo = state.settings.repo
    return str(repo) if repo is not None else None


def _refused(
    state: BridgeRuntime, started: float, message: str, detail: str | None = None
) -> CallToolResult:
    error = label.BridgeError(reason="refused", message=message, detail=detail)
    return state.failure(TOOL, None, None, started, error)


def _summary(report: MigrationReport, state: BridgeRuntime) -> str:
    from bridge.migration.report import render_text

    return "Migration report (host and old-tool strings are untrusted data):\n" + fence(
        render_text(report), label="MIGRATION REPORT", total_limit=state.limits.total_chars
    )


async def asp_migration_check(
    ctx: Context,
    legacy: Annotated[
        list[Annotated[str, Field(max_length=200)]],
        Field(
            max_length=100,
            description="Legacy names to map and look up: roles (sense, judge, act), methods "
            "(sense/references, judge/evaluate, act/propose, ...), old tools (crg, rox, cix) or "
            "tool surfaces (crg:impact, cix:rename, ...). Empty: every legacy name the protocol defines.",
        ),
    ] = [],  # noqa: B006 - pydantic copies defaults
    findings: Annotated[
        list[dict[str, Any]] | dict[str, Any] | None,
        Field(
            description="The old tool's findings on the change: an array of ASP Diagnostics or of "
            "SARIF 2.1.0 results, or a whole SARIF 2.1.0 log. Omit for coverage only."
        ),
    ] = None,
    findings_format: Annotated[
        Literal["auto", "asp", "sarif"], Field(description="Shape of `findings` (auto-detected).")
    ] = "auto",
    changeset: Annotated[
        dict[str, Any] | None,
        Field(
            description="The change as an ASP ChangeSet. Omitted: the host's working-tree changeset "
            "(private host/workingChangeset helper; the reference host has it)."
        ),
    ] = None,
    paths: Annotated[
        list[str] | None,
        Field(max_length=1000, description="Limit the working-tree changeset to these paths."),
    ] = None,
    comparison: Annotated[
        Literal["all", "introduced"],
        Field(
            description="Host comparison: all after-state findings (default) or introduced only."
        ),
    ] = "all",
    line_tolerance: Annotated[
        int, Field(ge=0, le=1000, description="Lines two findings may be apart and still match.")
    ] = 2,
    rule_map: Annotated[
        dict[str, str] | None,
        Field(description='Extra old rule id -> ASP code pairs (e.g. {"X123": "python/odd"}).'),
    ] = None,
) -> Annotated[CallToolResult, Envelope]:
    from bridge.migration.coverage import coverage_map
    from bridge.migration.findings import FindingsError, parse_findings
    from bridge.migration.legacy_names import PROTOCOL_LEGACY_NAMES
    from bridge.migration.parity import ParityOptions
    from bridge.migration.report import build_report, report_json

    started = time.perf_counter()
    state = runtime(ctx)
    old: FindingsInput | None = None
    if findings is not None:
        try:
            old = parse_findings(findings, format=findings_format, repo_root=_repo_root(state))
        except FindingsError as exc:
            return _refused(state, started, str(exc), detail=None)
    inline: ChangeSet | None = None
    if changeset is not None:
        try:
            inline = ChangeSet.model_validate(changeset)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return _refused(state, started, f"malformed changeset: {where}: {first['msg']}")
    options = ParityOptions(line_tolerance=line_tolerance, rule_map=rule_map or {})

    calls = _Calls()
    capabilities, outcome = await _host(state, None, calls, "host/capabilities")
    if capabilities is None:
        return state.answer(TOOL, outcome)
    status, outcome = await _host(state, None, calls, "host/status")
    if status is None:
        return state.answer(TOOL, outcome)
    notes = []
    parity: ParitySection | None = None
    if old is not None:
        try:
            parity = await _parity(state, ctx, calls, old, inline, paths, comparison, options)
        except Refusal as exc:
            return _refused(state, started, str(exc))
    elif inline is not None:
        notes.append("A changeset was given without old-tool findings: parity was not run.")
    names = list(legacy) or list(PROTOCOL_LEGACY_NAMES)
    report = build_report(
        coverage_map(names, capabilities=capabilities, status=status),
        status=status,
        parity=parity,
        notes=notes,
    )
    method = calls.last or "host/status"
    others = {m: r for m, r in calls.results.items() if m != method}
    bridge_result = {"migrationCheck": report_json(report), "hostResults": others}
    size = label.carried_bytes(calls.results[method], bridge_result)
    if size > state.limits.max_result_bytes:
        return _refused(state, started, _too_large(size, state.limits.max_result_bytes, report))
    return label.success(
        **state.header(TOOL, method, "interactive", started),
        host_result=calls.results[method],
        bridge_result=bridge_result,
        limits=state.limits,
        summary=_summary(report, state),
    )


def _too_large(size: int, limit: int, report: MigrationReport) -> str:
    """The bridge's own report outgrew the result limit: say so, and which input made it big."""
    result = report.parity.result if report.parity is not None else None
    counts = (
        f" ({result.counts.old} old and {result.counts.asp} host findings)"
        if result is not None
        else ""
    )
    return (
        f"the migration report of {size} bytes{counts} exceeds the bridge result limit of {limit} "
        "bytes (max_result_bytes); it is not passed on truncated. Shrink `findings` (one file or "
        "rule at a time), narrow the change (`paths` or a smaller `changeset`), or ask for fewer "
        "`legacy` names"
    )


TOOLS = (
    ToolSpec(
        TOOL,
        "ASP migration check (old tools)",
        "Can the ASP host serve what an old tool did? Maps legacy names (sense/judge/act, "
        "sense/*, judge/evaluate, act/propose, crg/rox/cix) to ASP capabilities and reports the "
        "host's coverage (served, served-degraded, not-served, unknown-legacy-name); with the old "
        "tool's findings (ASP Diagnostics or SARIF 2.1.0) it runs one interactive "
        "host/evaluateChangeset and matches findings (matched, only-old = parity blocker, "
        "only-ASP). Never claims a replacement (replacementClaimed: false).",
        asp_migration_check,
        host_method="host/evaluateChangeset",
    ),
)
