"""The bake-off read against ADR 0025: one row per property the ADR asks an MCP extension to prove,
and what each MCP protocol era and transport loses against the native binding.

The per-case properties (`compare.py`) are evidence; this module only groups them. A property the
MCP binding cannot carry at all is said so ("cannot be proven over MCP"), never passed. The
variant summary compares every other era/transport run with the same native run; it is reported,
and does not change the verdict, which is the 2025-11-25 stdio run's (today's clients).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.ext.bakeoff.report import CaseResult

PRIMARY_VARIANT = "2025-11-25/stdio"
# (ADR 0025 property, the bake-off properties that are its evidence, what MCP cannot show)
ADR_PROPERTIES: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    (
        "host-driven required invocation",
        (),
        "cannot be proven over MCP: the client (a model, for tools) decides whether and when a "
        "request is sent; the bridge only forwards what it is sent, so nothing makes a required "
        "check happen",
    ),
    ("call-site preservation", ("call-site",), None),
    ("freshness equality", ("freshness",), None),
    ("required coverage", ("coverage",), None),
    ("authority grants", ("authority",), None),
    ("assurance-mode reporting", ("assurance",), None),
    (
        "cancellation receipts",
        ("cancellation",),
        "the host answers a cancelled request with error -32016 on both bindings; an error carries "
        "no receipt, so a cancellation receipt cannot be shown on either binding",
    ),
    (
        "mediated apply without ordinary-tool ambiguity",
        ("mediated-apply", "apply-refused"),
        "over MCP apply is refused by design and never forwarded: the extension previews plans, "
        "the native binding alone applies through the host",
    ),
)


def _judged(
    results: list[CaseResult], name: str, variant: str | None
) -> tuple[list[str], list[str]]:
    held, failed = [], []
    for result in results:
        comparison = (
            result.comparison if variant is None else result.variants.get(variant, (None, None))[1]
        )
        judgement = comparison.properties.get(name) if comparison is not None else None
        if judgement is None:
            continue
        if judgement.verdict == "held":
            held.append(result.case.name)
        elif judgement.verdict == "failed":
            failed.append(result.case.name)
    return held, failed


def adr_rows(results: list[CaseResult]) -> list[dict[str, Any]]:
    """One row per ADR 0025 property: verdict and evidence (cases, per variant losses)."""
    variants = sorted({v for r in results for v in r.variants})
    rows = []
    for title, evidence, limit in ADR_PROPERTIES:
        held: list[str] = []
        failed: list[str] = []
        for name in evidence:
            h, f = _judged(results, name, None)
            held += [f"{name}:{c}" for c in h]
            failed += [f"{name}:{c}" for c in f]
        lost = {
            v: sorted({c for name in evidence for c in _judged(results, name, v)[1]})
            for v in variants
        }
        lost = {v: cases for v, cases in lost.items() if cases}
        if not evidence:
            verdict = "cannot be proven over MCP"
        elif title.startswith("mediated apply"):
            applied = any(c.startswith("mediated-apply:") for c in failed)
            verdict = "not over MCP (by design)" if applied or held else "not run"
        elif failed:
            verdict = "not preserved"
        elif held:
            verdict = "preserved" if not lost else "preserved on " + PRIMARY_VARIANT + " only"
        else:
            verdict = "not run"
        rows.append(
            {
                "property": title,
                "verdict": verdict,
                "evidence": {"held": held, "failed": failed, "lostIn": lost},
                "limit": limit,
            }
        )
    return rows


def variant_rows(results: list[CaseResult]) -> list[dict[str, Any]]:
    """Per era/transport: cases compared, must-hold failures, extension visibility, progress
    notifications received, and the cancellation case's outcome."""
    rows = []
    for variant in sorted({v for r in results for v in r.variants}):
        compared, failures, visible, progress = 0, [], set(), 0
        cancellation: dict[str, Any] | None = None
        for result in results:
            run, comparison = result.variants.get(variant, (None, None))
            if run is None or comparison is None:
                continue
            compared += comparison.status == "compared"
            failures += [f"{result.case.name}:{n}" for n in comparison.failures]
            if comparison.status == "failed":
                failures.append(f"{result.case.name}: {comparison.reason}")
            visible.update(run.advertised_in)
            progress += sum(s.progress for s in run.steps)
            if result.case.request.action == "cancel" and run.final is not None:
                cancellation = {"kind": run.final.kind, "record": run.final.cancellation}
        rows.append(
            {
                "variant": variant,
                "compared": compared,
                "failures": failures,
                "extensionAdvertisedIn": sorted(visible),
                "progressNotifications": progress,
                "cancellation": cancellation,
            }
        )
    return rows


def table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A markdown table after a blank line: the header, its rule, one line per row."""
    return [
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]


def _evidence(row: dict[str, Any]) -> str:
    ev = row["evidence"]
    parts = []
    if ev["held"]:
        parts.append(f"held in {len(ev['held'])} case judgement(s)")
    if ev["failed"]:
        parts.append("differs in " + ", ".join(ev["failed"]))
    for variant, cases in ev["lostIn"].items():
        parts.append(f"lost over {variant} in {', '.join(cases)}")
    if row["limit"]:
        parts.append(row["limit"])
    return "; ".join(parts) or "—"


def _cancellation(row: dict[str, Any]) -> str:
    cancel = row["cancellation"] or {}
    if not cancel:
        return "—"
    reply = (cancel.get("record") or {}).get("hostReply") or {}
    return f"{cancel.get('kind', '—')} → {reply.get('code') or reply.get('kind') or '—'}"


def render(report: dict[str, Any]) -> list[str]:
    """Markdown for the two tables."""
    lines = table(
        ["ADR 0025 property", "Verdict", "Evidence"],
        [[r["property"], r["verdict"], _evidence(r)] for r in report.get("adrProperties", [])],
    )
    if report.get("variants"):
        lines += table(
            [
                "MCP era/transport",
                "Compared",
                "Must-hold failures",
                "Extension advertised in",
                "Progress received",
                "Cancellation",
            ],
            [
                [
                    row["variant"],
                    row["compared"],
                    ", ".join(row["failures"]) or "none",
                    ", ".join(row["extensionAdvertisedIn"]) or "nowhere",
                    row["progressNotifications"],
                    _cancellation(row),
                ]
                for row in report["variants"]
            ],
        )
    return lines
