"""`bakeoff.json` (one record per case and binding) and `bakeoff.md` (a table read in a minute)."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridge.ext import EXTENSION_ID, EXTENSION_VERSION
from bridge.ext.bakeoff.adr import adr_rows, table, variant_rows
from bridge.ext.bakeoff.adr import render as render_adr
from bridge.ext.bakeoff.compare import CaseComparison
from bridge.ext.bakeoff.plan import BindingRun, Step
from bridge.ext.bakeoff.spec import MUST_HOLD, PROPERTIES, Case

BINDINGS = ("native", "mcp-extension")


@dataclass
class CaseResult:
    """A case's runs over both bindings (one per repeat) and the comparison of the first pair."""

    case: Case
    comparison: CaseComparison
    runs: dict[str, list[BindingRun]] = field(default_factory=dict)
    # "<era>/<transport>" -> the MCP run over that variant and its comparison with native
    variants: dict[str, tuple[BindingRun, CaseComparison]] = field(default_factory=dict)


def _p50(samples: list[float]) -> float | None:
    return round(statistics.median(samples), 3) if samples else None


def _latencies(result: CaseResult, runs: list[BindingRun], *, warm: bool) -> list[float]:
    """Latencies of requests both bindings carried to the host (evaluate cases that compared).

    Cold = the first request (the host launches the provider); warm = the same request again.
    Cancellation, fast-path, refusals and not-run cases measure nothing comparable.
    """
    if result.case.request.action != "call" or result.comparison.status != "compared":
        return []
    steps = [r.warm if warm else r.final for r in runs if r.status == "ran"]
    return [s.latency_ms for s in steps if s is not None]


def property_verdicts(results: list[CaseResult]) -> dict[str, dict[str, Any]]:
    names = [*PROPERTIES, "binding-ran"]
    verdicts: dict[str, dict[str, Any]] = {}
    for name in names:
        held: list[str] = []
        failed: list[str] = []
        not_run: list[str] = []
        not_applicable: list[str] = []
        for result in results:
            judgement = result.comparison.properties.get(name)
            if judgement is None:
                continue
            buckets = {"held": held, "failed": failed, "n/a": not_applicable}
            buckets.get(judgement.verdict, not_run).append(result.case.name)
        if not (held or failed or not_run or not_applicable):
            continue
        must = name in MUST_HOLD or name == "binding-ran"
        if failed:
            verdict = "not preserved" if must else "not preserved (by design)"
        elif held:
            verdict = "preserved"
        else:
            verdict = "not run"
        verdicts[name] = {
            "verdict": verdict,
            "mustHold": must,
            "held": held,
            "failed": failed,
            "notRun": not_run,
            "notApplicable": not_applicable,
        }
    return verdicts


def build_report(
    results: list[CaseResult], *, host_command: str, repeat: int, started: float, jobs: int = 1
) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    samples: dict[str, list[float]] = {b: [] for b in BINDINGS}
    warm_samples: dict[str, list[float]] = {b: [] for b in BINDINGS}
    for result in results:
        for binding in BINDINGS:
            runs = result.runs.get(binding, [])
            lat = _latencies(result, runs, warm=False)
            warm = _latencies(result, runs, warm=True)
            samples[binding].extend(lat)
            warm_samples[binding].extend(warm)
            first = runs[0] if runs else None
            records.append(
                {
                    "case": result.case.name,
                    "title": result.case.title,
                    "binding": binding,
                    "method": result.case.request.method,
                    "callSite": result.case.request.call_site,
                    "status": first.status if first else "not-run",
                    "reason": first.reason if first else "not carried",
                    "latencyMs": [round(x, 3) for x in lat],
                    "p50Ms": _p50(lat),
                    "warmLatencyMs": [round(x, 3) for x in warm],
                    "run": first.to_json() if first else None,
                }
            )
        for variant, (run, comparison) in result.variants.items():
            records.append(
                {
                    "case": result.case.name,
                    "title": result.case.title,
                    "binding": f"mcp-extension@{variant}",
                    "method": result.case.request.method,
                    "callSite": result.case.request.call_site,
                    "status": run.status,
                    "reason": run.reason,
                    "comparison": comparison.status,
                    "failures": list(comparison.failures),
                    "run": run.to_json(),
                }
            )
    properties = property_verdicts(results)
    failures = [
        {"case": r.case.name, "property": name, "note": r.comparison.properties[name].note}
        for r in results
        for name in r.comparison.failures
    ]
    statuses = [r.comparison.status for r in results]
    return {
        "bakeoff": "asp-mcp-bridge binding bake-off (ADR 0025)",
        "formatVersion": 1,
        "generatedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "durationS": round(time.time() - started, 2),
        "extension": {"identifier": EXTENSION_ID, "version": EXTENSION_VERSION},
        "hostCommand": host_command,
        "repeat": repeat,
        "jobs": jobs,
        "bindings": {
            b: {
                "p50Ms": _p50(samples[b]),
                "samples": len(samples[b]),
                "warmP50Ms": _p50(warm_samples[b]),
                "warmSamples": len(warm_samples[b]),
            }
            for b in BINDINGS
        },
        "latencyNote": "p50Ms: the first evaluate on a fresh host (includes provider launch); "
        "warmP50Ms: the same request again on the warm host. Both bindings, same cases.",
        "counts": {
            "cases": len(results),
            "compared": statuses.count("compared"),
            "notRun": statuses.count("not-run"),
            "failed": statuses.count("failed"),
        },
        "verdict": "fail" if failures else "pass",
        "failures": failures,
        "properties": properties,
        "adrProperties": adr_rows(results),
        "variants": variant_rows(results),
        "cases": [r.comparison.to_json() for r in results],
        "records": records,
    }


def _cell(run: BindingRun | None) -> str:
    if run is None:
        return "—"
    if run.status != "ran":
        return run.status
    step = run.final
    return _step_cell(step) if step else "—"


def _step_cell(step: Step) -> str:
    if step.kind == "result":
        result = step.result if isinstance(step.result, dict) else {}
        if "applied" in result:  # an apply result embeds the validation decision
            raw = result.get("refusal")
            reason = raw.get("reason", "?") if isinstance(raw, dict) else "?"
            return "applied" if result["applied"] else f"not applied ({reason})"
        decision = result.get("decision")
        if isinstance(decision, str):
            return decision
        return "result"
    if step.kind == "cancelled":
        reply = (step.cancellation or {}).get("hostReply") or {}
        return f"cancelled → {reply.get('code') or reply.get('kind', '?')}"
    code = (step.error or {}).get("code")
    return f"{step.kind} {code}" if code is not None else step.kind


def _case_verdict(comparison: CaseComparison) -> str:
    if comparison.status == "not-run":
        return f"not run: {comparison.reason}"
    if comparison.status == "failed":
        return f"FAILED: {comparison.reason}"
    judged = [j for j in comparison.properties.values() if j.verdict in ("held", "failed")]
    held = sum(1 for j in judged if j.verdict == "held")
    text = "ok" if not comparison.failures else "FAILED: " + ", ".join(comparison.failures)
    by_design = [
        n for n, j in comparison.properties.items() if j.verdict == "failed" and not j.must_hold
    ]
    if by_design:
        text += " (" + ", ".join(by_design) + " not preserved by design)"
    scenario = comparison.scenario
    if scenario and not scenario.get("met", True):
        text += " ⚠ scenario not exercised"
    return f"{text} — {held}/{len(judged)} held"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def render_markdown(report: dict[str, Any], results: list[CaseResult]) -> str:
    counts = report["counts"]
    lines = [
        "# ASP binding bake-off: native JSON-RPC stdio vs MCP extension",
        "",
        f"Extension `{report['extension']['identifier']}` {report['extension']['version']} · "
        f"host `{report['hostCommand']}` · repeat {report['repeat']} · {report['generatedAt']}",
        "",
        f"**Verdict: {report['verdict'].upper()}** — {counts['compared']} compared, "
        f"{counts['notRun']} not run, {counts['failed']} failed, of {counts['cases']} cases.",
    ]
    lines += table(
        ["Case", "Call-site", "Native", "MCP extension", "Result"],
        [
            [
                result.case.title,
                result.case.request.call_site,
                _cell(next(iter(result.runs.get("native", [])), None)),
                _cell(next(iter(result.runs.get("mcp-extension", [])), None)),
                _case_verdict(result.comparison),
            ]
            for result in results
        ],
    )
    lines += table(
        ["Property", "Must hold", "Verdict", "Held in", "Failed in", "Not run in"],
        [
            [
                name,
                "yes" if data["mustHold"] else "no",
                data["verdict"],
                len(data["held"]),
                ", ".join(data["failed"]) or 0,
                len(data["notRun"]),
            ]
            for name, data in report["properties"].items()
        ],
    )
    lines += table(
        ["Binding", "p50 first evaluate (ms)", "p50 warm evaluate (ms)", "samples"],
        [
            [binding, _ms(data["p50Ms"]), _ms(data["warmP50Ms"]), data["samples"]]
            for binding, data in report["bindings"].items()
        ],
    )
    lines += render_adr(report)
    lines += [
        "",
        "Every MCP answer is labelled `gateSatisfied: false`: the extension is a non-authoritative "
        "experiment and never satisfies a blocking gate, whatever it preserves. "
        "`mediated-apply` is not required: the extension refuses `asp/host/applyProposal` by "
        "design (`apply-refused`). Cancellation compares the kind and error code of the host's "
        "terminal answer to `$/cancelRequest` on both bindings.",
        "",
    ]
    return "\n".join(lines)


def write(out_dir: Path, report: dict[str, Any], results: list[CaseResult]) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "bakeoff.json"
    md_path = out_dir / "bakeoff.md"
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(report, results), encoding="utf-8")
    return json_path, md_path
