"""The migration check's result: one JSON shape (always `replacementClaimed: false`) and its text form."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from bridge.fence import clean_text, one_line
from bridge.migration.base import Model
from bridge.migration.coverage import CoverageItem, CoverageStatus
from bridge.migration.findings import Finding
from bridge.migration.parity import HostEvaluation, ParityResult
from bridge.summaries import lifecycle_words

BASIS = (
    "Evidence for a migration decision only: the ASP host's answer today and finding parity on one "
    "change. It never claims that an old tool can be retired, and it satisfies no ASP gate."
)
_STATUSES: tuple[CoverageStatus, ...] = (
    "served",
    "served-degraded",
    "not-served",
    "unknown-legacy-name",
)


class ParitySection(Model):
    ran: bool
    reason: str = ""
    host_method: str = "host/evaluateChangeset"
    call_site: str = "interactive"
    comparison: str = "all"
    changeset_source: Literal["inline", "host/workingChangeset"] | None = None
    change_paths: tuple[str, ...] = ()
    findings_format: str | None = None
    old_tools: tuple[str, ...] = ()
    host_evaluation: HostEvaluation | None = None
    result: ParityResult | None = None


class MigrationReport(Model):
    """The whole answer: coverage per legacy name, and parity when findings were given."""

    kind: Literal["asp-migration-check"] = "asp-migration-check"
    replacement_claimed: Literal[False] = False
    non_authoritative: Literal[True] = True
    basis: str = BASIS
    host: dict[str, str] = {}
    coverage: tuple[CoverageItem, ...] = ()
    coverage_counts: dict[str, int] = {}
    parity: ParitySection | None = None
    notes: tuple[str, ...] = ()


def host_identity(status: Mapping[str, Any] | None) -> dict[str, str]:
    """Name, version and state from `host/status.host`, capped; empty when the host gave none."""
    host = status.get("host") if isinstance(status, Mapping) else None
    if not isinstance(host, Mapping):
        return {}
    return {
        k: _clean(host[k], 80) for k in ("name", "version", "state") if isinstance(host.get(k), str)
    }


def build_report(
    coverage: Iterable[CoverageItem],
    *,
    status: Mapping[str, Any] | None = None,
    parity: ParitySection | None = None,
    notes: Iterable[str] = (),
) -> MigrationReport:
    items = tuple(coverage)
    counts: dict[str, int] = {s: sum(1 for i in items if i.status == s) for s in _STATUSES}
    return MigrationReport(
        host=host_identity(status),
        coverage=items,
        coverage_counts=counts,
        parity=parity,
        notes=tuple(notes),
    )


def report_json(report: MigrationReport) -> dict[str, Any]:
    """The JSON shape (camelCase); `replacementClaimed` is always present and false."""
    return report.model_dump(mode="json", by_alias=True, exclude_none=False)


# -- text -----------------------------------------------------------------------------------------


def _clean(value: Any, limit: int = 160) -> str:
    """Host and old-tool strings are untrusted: one line, no control characters, length-capped."""
    return one_line(value, limit)


def _where(f: Finding) -> str:
    pos = f":{f.start.line + 1}:{f.start.char + 1}" if f.start else ""
    return _clean(f.path, 80) + pos


def _finding_line(f: Finding) -> str:
    return f"{_where(f)}  {_clean(f.rule, 40)}  {_clean(f.message, 100)}"


def render_text(report: MigrationReport) -> str:
    """A readable report: coverage table, parity table, and the no-replacement statement."""
    lines = ["NON-AUTHORITATIVE ASP migration check (replacementClaimed: false)"]
    if report.host:
        h = report.host
        lines.append(f"host: {h.get('name', '?')} {h.get('version', '')} ({h.get('state', '?')})")
    lines += ["", "Coverage (host/capabilities + host/status):"]
    rows = [("legacy name", "ASP capability", "status", "providers: state", "required at")]
    for item in report.coverage:
        m = item.mapping
        canonical = m.canonical or "-"
        providers = ", ".join(
            f"{_clean(p.id, 40)}: {lifecycle_words(p.state, p.lifecycle_state)}"
            for p in item.providers
        )
        rows.append(
            (
                _clean(item.name, 40),
                canonical,
                item.status,
                providers or "-",
                _clean(", ".join(item.required_at), 80) or "-",
            )
        )
    lines += _table(rows)
    for item in report.coverage:
        extra = f"  {_clean(item.name, 40)}: {_clean(item.reason, 240)}"
        if item.legacy_aliases_advertised:
            extra += f" [aliases advertised: {_clean(', '.join(item.legacy_aliases_advertised))}]"
        lines.append(extra)
    lines += ["", *_parity_text(report.parity)]
    for note in report.notes:
        lines.append(f"note: {_clean(note, 300)}")
    lines += ["", "Replacement claimed: no. " + BASIS]
    return clean_text("\n".join(lines)) + "\n"  # a last sweep for any string not cleaned above


def _parity_text(section: ParitySection | None) -> list[str]:
    if section is None:
        return ["Parity: not run (no old-tool findings given)."]
    if not section.ran or section.result is None:
        return [f"Parity: not run: {_clean(section.reason, 300)}"]
    r, c = section.result, section.result.counts
    source = section.changeset_source or "?"
    lines = [
        f"Parity ({section.host_method}, call-site {section.call_site}, comparison {section.comparison}; "
        f"change from {source}: {len(section.change_paths)} path(s); old tool: "
        f"{', '.join(_clean(t, 40) for t in section.old_tools) or section.findings_format})",
    ]
    if section.host_evaluation is not None:
        ev = section.host_evaluation
        ran = _clean(", ".join(ev.ran), 300) or "none"
        lines.append(f"  host decision: {_clean(ev.decision, 40)} (ran: {ran})")
        lines += [f"  host coverage degraded: {_clean(d, 200)}" for d in ev.degraded]
    lines.append(
        f"  old {c.old}  asp {c.asp}  matched {c.matched}  only-old {c.only_old} (parity blockers)  "
        f"only-ASP {c.only_asp}"
    )
    if r.matched:
        lines.append(f"  matched ({c.matched}):")
        rows = [("old tool", "ASP host", "rule kind", "how")]
        for m in r.matched:
            delta = f", line {m.line_delta:+d}" if m.line_delta else ""
            kind = _clean(m.rule_kind, 60) if m.rule_kind else "-"
            rows.append((_where(m.old), _where(m.asp), kind, m.method + delta))
        lines += ["    " + row for row in _table(rows)]
    if r.only_old:
        lines.append(
            f"  ONLY-OLD ({c.only_old}), parity blockers: the old tool found these, the host did not"
        )
        for o in r.only_old:
            lines.append(f"    {_finding_line(o.finding)}")
            lines.append(f"      why: {_clean(o.reason, 200)}")
    if r.only_asp:
        lines.append(f"  only-ASP ({c.only_asp}): the host found these, the old tool did not")
        for x in r.only_asp:
            lines.append(f"    {_finding_line(x.finding)}")
            lines.append(f"      why: {_clean(x.reason, 200)}")
    lines += [f"  note: {_clean(n, 300)}" for n in r.notes]
    return lines


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
