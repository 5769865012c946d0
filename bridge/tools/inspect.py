"""Inspect family: `asp_inspect` — symbols, references, callers, callees and impact, answered by the
ASP host's inspect providers (`host/queryInspect`, call-site interactive) as of the host's baseline.

The host result goes verbatim into the label envelope (`hostResult`); the text is a compact listing,
one line per node or edge (kind, name, `path:line`, 1-based), cut into pages so the whole text stays
within `inspect_page_chars`. The cursor is an opaque offset into the host's answer, bound to the
query and to the baseline of the first page: a later page asks the host for that same baseline, so
a workspace that changed in between shows as degraded `stale-baseline`, never as shifted items.
Degraded or incomplete coverage is said first, before any item: it is not an error and never an
empty success. `bridgeResult.inspect` says how many items exist, which were shown, and the next cursor.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from asp_protocol.canonical import digest
from bridge import label
from bridge.fence import fence
from bridge.label import Envelope
from bridge.runtime import BridgeRuntime
from bridge.structured import size_of
from bridge.tools import ToolSpec, runtime
from bridge.tools.inspect_render import (
    Cursor,
    CursorError,
    decode_cursor,
    encode_cursor,
    impact_counts,
    item_lines,
    page_of,
    provider_results,
    provider_truncated,
    take_page,
    text_of,
)

TOOL = "asp_inspect"
METHOD = "host/queryInspect"
CALL_SITE = "interactive"
Verb = Literal["symbols", "references", "callers", "callees", "impact"]
SYMBOL_VERBS = ("references", "callers", "callees")
DEGRADED_SHOWN = 10
SAFE_TOKEN = re.compile(r"^[A-Za-z0-9:._/+-]{1,120}$")
FIT_ATTEMPTS = 8
STRUCTURED_RESERVE = 3000  # the envelope around hostResult/bridgeResult, serialized


class ArgumentError(ValueError):
    """Arguments that do not make one inspect question."""


def build_request(
    verb: str, path: str | None, symbol: str | None, limit: int | None
) -> dict[str, Any]:
    """The host's `request` object: symbols take `path` (a file or directory) or `symbol` (a name
    query) or neither (the workspace); references/callers/callees take `symbol`; impact takes `path`."""
    request: dict[str, Any] = {"verb": verb}
    if verb == "symbols":
        if path is not None and symbol is not None:
            raise ArgumentError(
                "symbols takes `path` (definitions of a file or directory) or "
                "`symbol` (a name query), not both"
            )
        if path is not None:
            request["path"] = path
        else:
            request["query"] = symbol or ""
    elif verb in SYMBOL_VERBS:
        if symbol is None:
            raise ArgumentError(f"{verb} needs `symbol` (a symbol id, dotted name or bare name)")
        if path is not None:
            raise ArgumentError(f"{verb} takes `symbol` only, not `path`")
        request["symbol"] = symbol
    else:
        if path is None:
            raise ArgumentError("impact needs `path` (the changed file or directory)")
        if symbol is not None:
            raise ArgumentError("impact takes `path` only, not `symbol`")
        request["path"] = path
    if limit is not None:
        request["limit"] = limit
    return request


def query_key(request: dict[str, Any]) -> str:
    """A short digest tying a cursor to the exact question it pages through."""
    return digest(request).removeprefix("sha256:")[:16]


def _safe(value: Any) -> str:
    """A host token (rev, reason) for bridge-authored text: printed only when harmless."""
    return value if isinstance(value, str) and SAFE_TOKEN.fullmatch(value) else "(unprintable)"


def _baseline(host_result: dict[str, Any]) -> dict[str, str] | None:
    """The snapshot the host answered as of (`receipt.baseline`: rev, and dirty for a work tree)."""
    receipt = host_result.get("receipt")
    raw = receipt.get("baseline") if isinstance(receipt, dict) else None
    if not isinstance(raw, dict) or not isinstance(raw.get("rev"), str):
        return None
    return {k: raw[k] for k in ("rev", "dirty") if isinstance(raw.get(k), str)}


def _coverage(host_result: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    coverage = host_result.get("coverage")
    coverage = coverage if isinstance(coverage, dict) else {}
    degraded = coverage.get("degraded")
    entries = [d for d in degraded if isinstance(d, dict)] if isinstance(degraded, list) else []
    return entries, coverage.get("exhaustive") is True


def _target(request: dict[str, Any]) -> str:
    if "symbol" in request:
        return f"of symbol {text_of(request['symbol'])!r}"
    if "path" in request:
        return f"of path {text_of(request['path'])!r}"
    return f"matching {text_of(request['query'])!r}" if request.get("query") else "of the workspace"


def _coverage_text(
    degraded: list[dict[str, Any]], exhaustive: bool, truncated: bool, resumed: bool, budget: int
) -> list[str]:
    """What a reader must know before any item: degraded or incomplete coverage."""
    if degraded:
        reasons = sorted({_safe(d.get("reason")) for d in degraded})
        out = [
            f"COVERAGE DEGRADED ({len(degraded)} entr{'y' if len(degraded) == 1 else 'ies'}: "
            f"{', '.join(reasons)}): the host's inspect answer is incomplete or empty. A short or "
            "empty listing here does NOT mean the code has no such symbols, references or impact."
        ]
        if resumed and "stale-baseline" in reasons:
            out.append(
                "The workspace changed since this cursor was issued (stale-baseline for the "
                "cursor's baseline): call asp_inspect again without `cursor` for a fresh answer."
            )
        shown = [
            f"{text_of(d.get('source'), 80)}"
            + (f" (requirement {text_of(d['requirement'], 80)})" if "requirement" in d else "")
            + f": {text_of(d.get('reason'), 60)} - {text_of(d.get('detail'), 300)}"
            for d in degraded[:DEGRADED_SHOWN]
        ]
        if len(degraded) > DEGRADED_SHOWN:
            shown.append(f"(+{len(degraded) - DEGRADED_SHOWN} more in structuredContent)")
        out.append(fence("\n".join(shown), label="COVERAGE DEGRADED", total_limit=budget))
        return out
    if truncated:
        return [
            "COVERAGE NOT EXHAUSTIVE: a provider's answer is cut (its item limit, the host's page "
            "bound, or uses it could not resolve: see the result's `data`); raise `limit` or "
            "narrow the query for the rest."
        ]
    if not exhaustive:
        return ["COVERAGE NOT EXHAUSTIVE: the host does not claim this answer is complete."]
    return []


def _summary(
    verb: str,
    request: dict[str, Any],
    host_result: dict[str, Any],
    page_lines: list[str],
    start: int,
    total: int,
    next_cursor: str | None,
    header: list[str],
    budget: int,
) -> str:
    baseline = _baseline(host_result) or {}
    state = " (current work tree, uncommitted changes)" if "dirty" in baseline else ""
    answers = len(provider_results(host_result))
    parts = [
        *header,
        f"asp_inspect {verb} {_target(request)}: {total} item(s) from {answers} provider "
        f"answer(s), as of baseline {_safe(baseline.get('rev'))}{state}. One line per node or "
        "edge: kind, name, path:line (1-based); edges read `kind from -> to`.",
    ]
    if verb == "impact":
        files, tests = impact_counts(host_result)
        parts.append(f"Impact: {files} impacted file(s); {tests} test module(s) among them.")
    if page_lines:
        parts.append(f"Items {start + 1}-{start + len(page_lines)} of {total}.")
    elif total and start >= total:
        parts.append(f"No items at offset {start}: the answer has {total}.")
    if next_cursor is not None:
        parts.append(
            "More items: call asp_inspect again with the same arguments and "
            f'cursor="{next_cursor}".'
        )
    elif page_lines:
        parts.append("This is the last page.")
    if page_lines:
        parts.append(fence("\n".join(page_lines), label="INSPECT ITEMS", total_limit=budget + 64))
    return "\n".join(parts)


def render(
    state: BridgeRuntime,
    started: float,
    verb: str,
    request: dict[str, Any],
    host_result: dict[str, Any],
    resume: Cursor | None,
) -> CallToolResult:
    """The labelled page: host result verbatim, text within `inspect_page_chars`."""
    page_chars = state.settings.inspect_page_chars
    lines = item_lines(host_result, verb)
    degraded, exhaustive = _coverage(host_result)
    truncated = provider_truncated(host_result)
    header = _coverage_text(degraded, exhaustive, truncated, resume is not None, page_chars // 4)
    offset = resume.offset if resume is not None else 0
    baseline = _baseline(host_result)
    # structuredContent holds this page of the answer; a JSON preview in text would only repeat it.
    limits = replace(state.limits, total_chars=0)
    full_digest = digest(host_result)
    fixed = size_of(page_of(host_result, verb, 0, 0))  # the answer without any item
    budget = page_chars
    coverage = (
        "degraded" if degraded else "complete" if exhaustive and not truncated else "incomplete"
    )
    bridge_result: dict[str, Any] = {}
    text = ""
    for _ in range(FIT_ATTEMPTS):
        page = take_page(lines, min(offset, len(lines)), max(budget, 1))
        next_offset = page.next_offset if page.lines else None
        next_cursor = (
            encode_cursor(Cursor(next_offset, query_key(request), baseline))
            if next_offset is not None and baseline is not None
            else None
        )
        bridge_result = {
            "inspect": {
                "verb": verb,
                "request": request,
                "items": len(lines),
                "offset": page.start,
                "returned": len(page.lines),
                "nextCursor": next_cursor,
                "pageChars": page_chars,
                "coverage": coverage,
                "degradedEntries": len(degraded),
                "providerTruncated": truncated,
                "lines": "1-based",
                "fullDigest": full_digest,
            }
        }
        paged = page_of(host_result, verb, page.start, len(page.lines))
        text = label.success_text(
            TOOL,
            METHOD,
            CALL_SITE,
            host_result=host_result,
            bridge_result=bridge_result,
            limits=limits,
            summary=_summary(
                verb,
                request,
                host_result,
                page.lines,
                page.start,
                len(lines),
                next_cursor,
                header,
                budget,
            ),
        )
        # structuredContent: the items' share must fit beside the answer's fixed part (receipt,
        # validAsOf); when even that is too large, the bound cuts it visibly (bridge/structured.py)
        items_part = size_of(paged) - fixed
        room = max(
            limits.structured_chars - fixed - size_of(bridge_result) - STRUCTURED_RESERVE,
            limits.structured_chars // 10,
        )
        over = max(len(text) - page_chars, 0)
        if items_part > room and page.lines:  # shrink the lines by the same share
            share = (items_part - room) / items_part
            over = max(over, int(share * sum(len(line) + 1 for line in page.lines)) + 1)
        if over == 0 or len(page.lines) <= 1:
            break
        used = sum(len(line) + 1 for line in page.lines)
        budget = used - over - 16  # shrink the page by what the text or structure overflows
    return label.success(  # labelled once, with the text that fits
        tool=TOOL,
        method=METHOD,
        call_site=CALL_SITE,
        host=state.host_identity(),
        latency_ms=(time.perf_counter() - started) * 1000,
        host_result=paged,
        bridge_result=bridge_result,
        limits=limits,
        text=text,
    )


def _refused(state: BridgeRuntime, started: float, message: str) -> CallToolResult:
    error = label.BridgeError(reason="refused", message=message)
    return state.failure(TOOL, METHOD, CALL_SITE, started, error)


async def asp_inspect(
    ctx: Context,
    verb: Annotated[
        Verb,
        Field(
            description="symbols: definitions of a file/directory (`path`), matching a name "
            "(`symbol`) or of the workspace (neither); references / callers / callees of "
            "`symbol`; impact: modules and tests importing the changed `path`, transitively."
        ),
    ],
    path: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=1000,
            description="Workspace-relative file or directory (symbols, impact).",
        ),
    ] = None,
    symbol: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=500,
            description="Symbol id (`path::Qual.name`), dotted name (`pkg.mod.func`) or bare name; "
            "for symbols, a name query (exact, glob or substring).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Field(ge=1, le=10000, description="Most items the provider returns (it says when it cut)."),
    ] = None,
    cursor: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=2000,
            description="The `nextCursor` of the previous page of this same query.",
        ),
    ] = None,
) -> Annotated[CallToolResult, Envelope]:
    started = time.perf_counter()
    state = runtime(ctx)
    try:
        request = build_request(verb, path, symbol, limit)
    except ArgumentError as exc:
        return _refused(state, started, str(exc))
    resume: Cursor | None = None
    if cursor is not None:
        try:
            resume = decode_cursor(cursor)
        except CursorError as exc:
            return _refused(state, started, str(exc))
        if resume.query != query_key(request):
            return _refused(
                state,
                started,
                "cursor belongs to a different query (verb, path, symbol or limit changed); "
                "call again without `cursor`",
            )
    params: dict[str, Any] = {"callSite": CALL_SITE, "request": request}
    if resume is not None:
        params["baseline"] = resume.baseline
    outcome = await state.call(ctx, tool=TOOL, method=METHOD, params=params, call_site=CALL_SITE)
    if outcome.result is None:
        return state.answer(TOOL, outcome)
    return render(state, started, verb, request, outcome.result, resume)


TOOLS = (
    ToolSpec(
        TOOL,
        "ASP inspect (symbols, references, callers, callees, impact)",
        "Ask the ASP host's inspect providers about the code as of the host's baseline: "
        "definitions of a file or directory or matching a name, references to a symbol across "
        "modules, callers and callees, and the modules and tests a change to a path impacts. "
        "Compact paginated text (kind, name, path:line) plus the host result verbatim; degraded "
        "coverage is stated first and never means 'none found'.",
        asp_inspect,
        host_method=METHOD,
    ),
)
