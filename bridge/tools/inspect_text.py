"""The bridge-authored sentences of an `asp_inspect` page: coverage first, then the summary.

Everything here reads an untrusted host result; host tokens are printed only when they are harmless
(`safe`), every other host string goes through `text_of` or the untrusted fence. A page of a
host-paged answer says so: how large the host's whole answer is and that the cursor continues
into the host's next page, so a short listing is never mistaken for the whole answer.
"""

from __future__ import annotations

import re
from typing import Any

from bridge.fence import fence
from bridge.summaries import DEGRADED_SHOWN
from bridge.tools.inspect_render import HostPage, impact_counts, provider_results, text_of

SAFE_TOKEN = re.compile(r"^[A-Za-z0-9:._/+-]{1,120}$")


def safe(value: Any) -> str:
    """A host token (rev, reason) for bridge-authored text: printed only when harmless."""
    return value if isinstance(value, str) and SAFE_TOKEN.fullmatch(value) else "(unprintable)"


def answer_baseline(host_result: dict[str, Any]) -> dict[str, str] | None:
    """The snapshot the host answered as of (`receipt.baseline`: rev, and dirty for a work tree)."""
    receipt = host_result.get("receipt")
    raw = receipt.get("baseline") if isinstance(receipt, dict) else None
    if not isinstance(raw, dict) or not isinstance(raw.get("rev"), str):
        return None
    return {k: raw[k] for k in ("rev", "dirty") if isinstance(raw.get(k), str)}


def coverage_of(host_result: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """(the degraded entries, whether the host claims the answer exhaustive)."""
    coverage = host_result.get("coverage")
    coverage = coverage if isinstance(coverage, dict) else {}
    degraded = coverage.get("degraded")
    entries = [d for d in degraded if isinstance(d, dict)] if isinstance(degraded, list) else []
    return entries, coverage.get("exhaustive") is True


UNINDEXED_SHOWN = 5


def unresolved_answers(host_result: dict[str, Any]) -> int:
    """How many provider answers say the symbol asked about names no definition they index
    (`data.unresolved`). Their 0 items mean "not known here", never "not used"."""
    return sum(
        1
        for _, graph in provider_results(host_result)
        if isinstance(graph.get("data"), dict) and graph["data"].get("unresolved") is True
    )


def unresolved_text(host_result: dict[str, Any]) -> list[str]:
    if not unresolved_answers(host_result):
        return []
    return [
        "Symbol not found: no definition by that name is in the provider's index, so 0 items "
        "here means the name is unknown, not that it is unused. Check the spelling, or find its "
        "qualified name with verb symbols and a query, then ask again."
    ]


def unindexed_text(host_result: dict[str, Any]) -> list[str]:
    """The files a provider holds no facts of that may change this answer
    (`data.incomplete.unindexed`: they do not parse with its Python, or are too large)."""
    count, paths = 0, []
    for _, graph in provider_results(host_result):
        data = graph.get("data")
        incomplete = data.get("incomplete") if isinstance(data, dict) else None
        if not isinstance(incomplete, dict):
            continue
        listed = incomplete.get("unindexed")
        listed = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
        total = incomplete.get("unindexedCount")
        count += total if type(total) is int and total >= len(listed) else len(listed)
        paths += [f"{text_of(e.get('path'))}: {text_of(e.get('why'), 120)}" for e in listed]
    if not count:
        return []
    shown = paths[:UNINDEXED_SHOWN] + (
        [f"(+{count - UNINDEXED_SHOWN} more in structuredContent)"]
        if count > UNINDEXED_SHOWN
        else []
    )
    return [
        f"{count} file(s) the provider could not index may hold more of this answer (they do "
        "not parse with its Python, e.g. code for a newer one, or are too large):",
        fence("\n".join(shown), label="UNINDEXED FILES", total_limit=2000),
    ]


def _target(request: dict[str, Any]) -> str:
    if "symbol" in request:
        return f"of symbol {text_of(request['symbol'])!r}"
    if "path" in request:
        return f"of path {text_of(request['path'])!r}"
    return f"matching {text_of(request['query'])!r}" if request.get("query") else "of the workspace"


def coverage_text(
    degraded: list[dict[str, Any]],
    exhaustive: bool,
    truncated: bool,
    resumed: bool,
    budget: int,
    host: HostPage,
) -> list[str]:
    """What a reader must know before any item: degraded or incomplete coverage."""
    if degraded:
        reasons = sorted({safe(d.get("reason")) for d in degraded})
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
    if host.next_cursor is not None or host.unusable_cursor:
        return [
            "COVERAGE NOT EXHAUSTIVE YET: the host split its answer into pages and this is not "
            "its last one; follow the cursor to the end for the whole answer."
        ]
    if truncated:
        return [
            "COVERAGE NOT EXHAUSTIVE: a provider's answer is cut (its item limit, the host's page "
            "bound, uses it could not resolve, or files it could not parse that may hold more: "
            "see the result's `data`); raise `limit` or narrow the query for the rest."
        ]
    if not exhaustive:
        return ["COVERAGE NOT EXHAUSTIVE: the host does not claim this answer is complete."]
    return []


def _host_page_text(host: HostPage, resumed_host: bool) -> list[str]:
    if not host.paged or (
        host.next_cursor is None and not resumed_host and not host.unusable_cursor
    ):
        return []
    counts = ", ".join(f"{count} {name}" for name, count in sorted(host.total.items()))
    size = f" of at most {host.page_bytes} bytes" if host.page_bytes else ""
    out = [
        f"Host page{size}"
        + (" (a later one)" if resumed_host else "")
        + (f"; the host's whole answer has {counts}." if counts else ".")
    ]
    if host.unusable_cursor:
        out.append(
            "The host has more pages that this cursor cannot follow (several providers paged "
            "differently, or an unusual cursor): narrow the query or raise `page_bytes`."
        )
    return out


def summary(
    verb: str,
    request: dict[str, Any],
    host_result: dict[str, Any],
    page_lines: list[str],
    start: int,
    total: int,
    next_cursor: str | None,
    header: list[str],
    budget: int,
    host: HostPage,
    resumed_host: bool,
) -> str:
    """The page text: coverage header, what was asked and as of which baseline, then the items."""
    baseline = answer_baseline(host_result) or {}
    state = " (current work tree, uncommitted changes)" if "dirty" in baseline else ""
    answers = len(provider_results(host_result))
    where = "on this host page" if host.next_cursor is not None or resumed_host else ""
    parts = [
        *header,
        f"asp_inspect {verb} {_target(request)}: {total} item(s) {where}".rstrip()
        + f" from {answers} provider answer(s), as of baseline {safe(baseline.get('rev'))}"
        f"{state}. One line per node or edge: kind, name, path:line (1-based); edges read "
        "`kind from -> to`.",
        *_host_page_text(host, resumed_host),
    ]
    if verb == "impact":
        files, tests = impact_counts(host_result)
        parts.append(
            f"Impact{' on this host page' if where else ''}: {files} impacted file(s); {tests} "
            "test module(s) among them"
            + ("; later host pages list more." if host.next_cursor is not None else ".")
        )
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
        parts.append(
            "No later page can be reached with a cursor (see above)."
            if host.unusable_cursor
            else "This is the last page."
        )
    if page_lines:
        parts.append(fence("\n".join(page_lines), label="INSPECT ITEMS", total_limit=budget + 64))
    return "\n".join(parts)
