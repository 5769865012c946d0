"""Inspect family: `asp_inspect` — symbols, references, callers, callees and impact, answered by the
ASP host's inspect providers (`host/queryInspect`, call-site interactive) as of the host's baseline.

The host result goes verbatim into the label envelope (`hostResult`); the text is a compact listing,
one line per node or edge (kind, name, `path:line`, 1-based), cut into pages so the whole text stays
within `inspect_page_chars`. The cursor is an opaque offset into the host's answer, bound to the
query and to the baseline of the first page: a later page asks the host for that same baseline, so
a workspace that changed in between shows as degraded `stale-baseline`, never as shifted items.
The host pages large answers itself (`pageBytes`, which `page_bytes` sets): the bridge's cursor
then also carries the host's cursor, so paging to the end walks every host page in turn.
Degraded or incomplete coverage is said first, before any item: it is not an error and never an
empty success. `bridgeResult.inspect` says how many items exist, which were shown, and the next cursor.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from asp_protocol.canonical import digest
from asp_protocol.wire import present
from bridge import label
from bridge.label import Envelope
from bridge.runtime import BridgeRuntime
from bridge.structured import shorten_evidence, size_of
from bridge.tools import ToolSpec, runtime
from bridge.tools.inspect_render import (
    Cursor,
    CursorError,
    decode_cursor,
    encode_cursor,
    host_page,
    item_lines,
    page_of,
    provider_truncated,
    take_page,
)
from bridge.tools.inspect_text import (
    answer_baseline,
    coverage_of,
    coverage_text,
    summary,
    unindexed_text,
    unresolved_text,
)

TOOL = "asp_inspect"
METHOD = "host/queryInspect"
CALL_SITE = "interactive"
Verb = Literal["symbols", "references", "callers", "callees", "impact"]
SYMBOL_VERBS = ("references", "callers", "callees")
FIT_ATTEMPTS = 8
HOST_PAGE_BYTES = (4 * 1024, 4 * 1024 * 1024)  # the range `host/queryInspect` accepts
STRUCTURED_RESERVE = 3000  # the envelope around hostResult/bridgeResult, serialized


class ArgumentError(ValueError):
    """Arguments that do not make one inspect question."""


def build_request(
    verb: str,
    path: str | None,
    symbol: str | None,
    limit: int | None,
    page_bytes: int | None = None,
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
    return {**request, **present(limit=limit, pageBytes=page_bytes)}


def query_key(request: dict[str, Any]) -> str:
    """A short digest tying a cursor to the exact question it pages through."""
    return digest(request).removeprefix("sha256:")[:16]


def _model_size(host_result: dict[str, Any]) -> int:
    """What *host_result* takes in the model's view, whose freshness evidence is shortened."""
    return size_of(shorten_evidence(host_result, "/hostResult", []))


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
    degraded, exhaustive = coverage_of(host_result)
    truncated = provider_truncated(host_result)
    host = host_page(host_result)
    resumed_host = resume.host if resume is not None else None
    unresolved = unresolved_text(host_result)  # one line, or none when the symbol resolved
    header = (
        coverage_text(degraded, exhaustive, truncated, resume is not None, page_chars // 4, host)
        + unresolved
        + unindexed_text(host_result)
    )
    offset = resume.offset if resume is not None else 0
    baseline = answer_baseline(host_result)
    # structuredContent holds this page of the answer; a JSON preview in text would only repeat it.
    limits = replace(state.limits, total_chars=0)
    full_digest = digest(host_result)
    empty = page_of(host_result, verb, 0, 0)  # the answer without any item
    fixed, raw_fixed = _model_size(empty), size_of(empty)
    budget = page_chars
    coverage = (
        "degraded" if degraded else "complete" if exhaustive and not truncated else "incomplete"
    )
    bridge_result: dict[str, Any] = {}
    text = ""
    for _ in range(FIT_ATTEMPTS):
        page = take_page(lines, min(offset, len(lines)), max(budget, 1))
        next_offset = page.next_offset if page.lines else None
        following: Cursor | None = None
        if baseline is not None and next_offset is not None:  # more lines of this host page
            following = Cursor(next_offset, query_key(request), baseline, resumed_host)
        elif baseline is not None and host.next_cursor is not None:  # the host's next page
            following = Cursor(0, query_key(request), baseline, host.next_cursor)
        next_cursor = encode_cursor(following) if following is not None else None
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
                "symbolResolved": not unresolved,
                "hostPage": {
                    "paged": host.paged,
                    "resumed": resumed_host is not None,
                    "more": host.next_cursor is not None or host.unusable_cursor,
                    "followable": not host.unusable_cursor,
                    "pageBytes": host.page_bytes,
                    "total": host.total,
                },
                "lines": "1-based",
                "fullDigest": full_digest,
            }
        }
        if unresolved:  # a structured-content-only client sees this, not the text
            bridge_result["inspect"]["symbolNote"] = unresolved[0]
        paged = page_of(host_result, verb, page.start, len(page.lines))
        text = label.success_text(
            TOOL,
            METHOD,
            CALL_SITE,
            host_result=host_result,
            bridge_result=bridge_result,
            limits=limits,
            summary=summary(
                verb,
                request,
                host_result,
                page.lines,
                page.start,
                len(lines),
                next_cursor,
                header,
                budget,
                host,
                resumed_host is not None,
            ),
        )
        # structuredContent: the items' share must fit beside the answer's fixed part (receipt,
        # validAsOf); when even that is too large, the bound cuts it visibly (bridge/structured.py)
        items_part = size_of(paged) - raw_fixed  # the items alone (no evidence among them)
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
        **state.header(TOOL, METHOD, CALL_SITE, started),
        host_result=paged,
        bridge_result=bridge_result,
        limits=limits,
        text=text,
    )


def _refused(state: BridgeRuntime, started: float, message: str) -> CallToolResult:
    error = label.BridgeError(reason="refused", message=message)
    return state.failure(TOOL, METHOD, CALL_SITE, started, error)


# The tool's arguments, declared once each (the SDK derives the input schema from them).
VerbArg = Annotated[
    Verb,
    Field(
        description="symbols: definitions of a file/directory (`path`), matching a name "
        "(`symbol`) or of the workspace (neither); references / callers / callees of "
        "`symbol`; impact: modules and tests importing the changed `path`, transitively."
    ),
]
_PATH_DOC = "Workspace-relative file or directory (symbols, impact)."
PathArg = Annotated[str | None, Field(min_length=1, max_length=1000, description=_PATH_DOC)]
_SYMBOL_DOC = (
    "Symbol id (`path::Qual.name`), dotted name (`pkg.mod.func`) or bare name; "
    "for symbols, a name query (exact, glob or substring)."
)
SymbolArg = Annotated[str | None, Field(min_length=1, max_length=500, description=_SYMBOL_DOC)]
_LIMIT_DOC = "Most items the provider returns (it says when it cut)."
LimitArg = Annotated[int | None, Field(ge=1, le=10000, description=_LIMIT_DOC)]
_CURSOR_DOC = "The `nextCursor` of the previous page of this same query."
CursorArg = Annotated[str | None, Field(min_length=1, max_length=2000, description=_CURSOR_DOC)]
_PAGE_BYTES_DOC = (
    "Bytes per host page of the answer (host default 256 KiB); a later page "
    "must ask with the same value. Text pages stay within the bridge's own size."
)
PageBytesArg = Annotated[
    int | None, Field(ge=HOST_PAGE_BYTES[0], le=HOST_PAGE_BYTES[1], description=_PAGE_BYTES_DOC)
]


async def asp_inspect(
    ctx: Context,
    verb: VerbArg,
    path: PathArg = None,
    symbol: SymbolArg = None,
    limit: LimitArg = None,
    cursor: CursorArg = None,
    page_bytes: PageBytesArg = None,
) -> Annotated[CallToolResult, Envelope]:
    started = time.perf_counter()
    state = runtime(ctx)
    try:
        request = build_request(verb, path, symbol, limit, page_bytes)
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
                "cursor belongs to a different query (verb, path, symbol, limit or page_bytes "
                "changed); call again without `cursor`",
            )
    asked = request if resume is None or resume.host is None else {**request, "cursor": resume.host}
    params: dict[str, Any] = {"callSite": CALL_SITE, "request": asked}
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
