"""Match an old tool's findings against the ASP host's findings on the same change.

Three passes, each one-to-one: equal fingerprints (only when both sides carry them); same path and
rule kind within a line tolerance (nearest first, never pairing two different quoted names); same
path, rule kind and quoted name at any distance (a finding that moved with a line shift). What the
old tool found and the host did not is a parity blocker; the reverse is reported, not judged.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import Field

from bridge.evaluation import unanalysed_paths
from bridge.migration.base import Model
from bridge.migration.findings import Finding, parse_host_findings
from bridge.migration.matching import (
    Checkpoint,
    Matcher,
    MatchMethod,
    Side,
    line_of,
    no_checkpoint,
)
from bridge.migration.rules import RuleHow, asp_rule_kind, message_subject, old_rule_kind

DEFAULT_LINE_TOLERANCE = 2


class ParityOptions(Model):
    line_tolerance: int = Field(default=DEFAULT_LINE_TOLERANCE, ge=0, le=10_000)
    rule_map: dict[str, str] = Field(default_factory=dict)
    match_shifted_by_subject: bool = True


class MatchedFinding(Model):
    old: Finding
    asp: Finding
    method: MatchMethod
    rule_kind: str | None
    line_delta: int | None
    severity_differs: bool


class OnlyOldFinding(Model):
    finding: Finding
    rule_kind: str | None
    rule_mapping: RuleHow
    path_in_change: bool | None
    parity_blocker: Literal[True] = True
    reason: str


class OnlyAspFinding(Model):
    finding: Finding
    rule_kind: str
    path_seen_by_old_tool: bool
    reason: str


class ParityCounts(Model):
    old: int
    asp: int
    matched: int
    only_old: int
    only_asp: int
    parity_blockers: int
    only_old_outside_change: int
    matched_by: dict[str, int]


class ParityResult(Model):
    counts: ParityCounts
    matched: tuple[MatchedFinding, ...]
    only_old: tuple[OnlyOldFinding, ...]
    only_asp: tuple[OnlyAspFinding, ...]
    line_tolerance: int
    unmapped_old_rules: tuple[str, ...]
    notes: tuple[str, ...] = ()


def compare_findings(
    old: Sequence[Finding],
    asp: Sequence[Finding],
    *,
    options: ParityOptions | None = None,
    change_paths: Iterable[str] | None = None,
    notes: Iterable[str] = (),
    checkpoint: Checkpoint = no_checkpoint,
    unanalysed: frozenset[str] = frozenset(),
) -> ParityResult:
    """Pair old and ASP findings one-to-one; everything unpaired is listed with the reason.
    *unanalysed*: changed paths the host says no required provider analysed. Raises
    ParityTooLarge when the input would need more than PAIR_BUDGET candidate pairs."""
    opts = options or ParityOptions()
    olds = [_old_side(f, opts) for f in old]
    asps = [Side(f, asp_rule_kind(f.rule), "namespaced", message_subject(f.message)) for f in asp]
    matcher = Matcher(olds, asps, opts.line_tolerance, checkpoint)
    matcher.fingerprints()
    matcher.positions()
    if opts.match_shifted_by_subject:
        matcher.subjects()
    checkpoint()
    free = (matcher.free_old, matcher.free_asp)
    return _result(olds, asps, matcher.matched, free, opts, change_paths, notes, unanalysed)


def _old_side(f: Finding, opts: ParityOptions) -> Side:
    if f.origin == "asp":
        return Side(f, asp_rule_kind(f.rule), "namespaced", message_subject(f.message))
    kind, how = old_rule_kind(f.rule, f.message, opts.rule_map)
    return Side(f, kind, how, message_subject(f.message))


def _result(
    olds: list[Side],
    asps: list[Side],
    matched: list[tuple[int, int, MatchMethod]],
    free: tuple[set[int], set[int]],
    opts: ParityOptions,
    change_paths: Iterable[str] | None,
    notes: Iterable[str],
    unanalysed: frozenset[str],
) -> ParityResult:
    free_old, free_asp = free
    changed = set(change_paths) if change_paths is not None else None
    old_paths = {s.finding.path for s in olds}
    pairs = []
    for o, a, method in sorted(matched):
        fo, fa = olds[o].finding, asps[a].finding
        lo, la = line_of(fo), line_of(fa)
        pairs.append(
            MatchedFinding(
                old=fo,
                asp=fa,
                method=method,
                rule_kind=asps[a].kind,
                line_delta=(la - lo) if lo is not None and la is not None else None,
                severity_differs=fo.severity != fa.severity,
            )
        )
    host_lines: dict[tuple[str, str | None], set[int]] = defaultdict(set)
    for side in asps:
        lines = host_lines[(side.finding.path, side.kind)]
        host_lines[(side.finding.path, None)].add(-1)
        if side.finding.start is not None:
            lines.add(side.finding.start.line + 1)
    shown = {key: ", ".join(map(str, heapq.nsmallest(10, v))) for key, v in host_lines.items()}
    only_old = [_only_old(olds[o], shown, changed, unanalysed) for o in sorted(free_old)]
    only_asp = [
        OnlyAspFinding(
            finding=asps[a].finding,
            rule_kind=asps[a].kind or "",
            path_seen_by_old_tool=asps[a].finding.path in old_paths,
            reason="not reported by the old tool"
            + (
                ""
                if asps[a].finding.path in old_paths
                else " (the old tool reported nothing in this file)"
            ),
        )
        for a in sorted(free_asp)
    ]
    unmapped = sorted({s.finding.rule for s in olds if s.how == "unmapped"})
    by: dict[str, int] = {}
    for p in pairs:
        by[p.method] = by.get(p.method, 0) + 1
    counts = ParityCounts(
        old=len(olds),
        asp=len(asps),
        matched=len(pairs),
        only_old=len(only_old),
        only_asp=len(only_asp),
        parity_blockers=len(only_old),
        only_old_outside_change=sum(1 for x in only_old if x.path_in_change is False),
        matched_by=by,
    )
    extra = list(notes)
    if unmapped:
        extra.append(
            "Old-tool rules with no known ASP counterpart (pass a rule map to pair them): "
            + ", ".join(unmapped[:20])
        )
    return ParityResult(
        counts=counts,
        matched=tuple(pairs),
        only_old=tuple(only_old),
        only_asp=tuple(only_asp),
        line_tolerance=opts.line_tolerance,
        unmapped_old_rules=tuple(unmapped),
        notes=tuple(extra),
    )


def _only_old(
    side: Side,
    host_lines: dict[tuple[str, str | None], str],
    changed: set[str] | None,
    unanalysed: frozenset[str] = frozenset(),
) -> OnlyOldFinding:
    """Why an old finding stayed unpaired; *host_lines* shows the host's first 1-based lines per
    (path, rule kind), and has a (path, None) entry for every path the host reported in."""
    f = side.finding
    in_change = None if changed is None else f.path in changed
    if in_change is False:
        reason = "the path is not part of the evaluated change, so the host did not look at it"
    elif f.path in unanalysed:
        reason = (
            "no required provider analysed this path (the host lists it as not checked in "
            "its coverage), so the missing finding says nothing about the rule"
        )
    elif side.kind is None:
        reason = f"no ASP rule is known for old rule {f.rule!r}"
    elif (f.path, None) not in host_lines:
        reason = "the host reported nothing in this file"
    elif (f.path, side.kind) not in host_lines:
        reason = f"the host reported no {side.kind!r} finding in this file"
    else:
        shown = host_lines[(f.path, side.kind)] or "no line"
        reason = (
            f"the host's {side.kind!r} findings in this file are at line(s) {shown} and none "
            "matches this one (different name, or too far and already paired)"
        )
    return OnlyOldFinding(
        finding=f,
        rule_kind=side.kind,
        rule_mapping=side.how,
        path_in_change=in_change,
        reason=reason,
    )


class HostEvaluation(Model):
    """What the host's decision says about the run itself, so a reader can weigh the parity."""

    decision: str | None
    call_site: str | None
    ran: tuple[str, ...]
    degraded: tuple[str, ...]
    unparsed_findings: tuple[str, ...]


def parity_from_decision(
    old: Sequence[Finding],
    decision: Any,
    *,
    options: ParityOptions | None = None,
    change_paths: Iterable[str] | None = None,
    repo_root: str | None = None,
    checkpoint: Checkpoint = no_checkpoint,
) -> tuple[ParityResult, HostEvaluation]:
    """Compare old findings with the findings of a host `host/evaluateChangeset` result."""
    envelope = decision if isinstance(decision, dict) else {}
    asp, bad = parse_host_findings(envelope.get("findings", []), repo_root)
    coverage = envelope.get("coverage") if isinstance(envelope.get("coverage"), dict) else {}
    ran = tuple(_cap(r) for r in coverage.get("ran", []) if isinstance(r, str)) if coverage else ()
    degraded = tuple(
        _cap(f"{d.get('reason')}: {d.get('source')}: {d.get('detail')}")
        for d in (coverage.get("degraded", []) if coverage else [])
        if isinstance(d, dict) and d.get("reason") != "blocking-diagnostic"
    )
    notes = []
    if degraded:
        notes.append(
            "The host's coverage was degraded on this run; only-old findings may reflect that "
            "rather than a missing rule."
        )
    if bad:
        notes.append(f"{len(bad)} host finding(s) could not be read and were left out.")
    result = compare_findings(
        old,
        asp,
        options=options,
        change_paths=change_paths,
        notes=notes,
        checkpoint=checkpoint,
        unanalysed=unanalysed_paths(envelope),
    )
    evaluation = HostEvaluation(
        decision=_cap(envelope["decision"]) if isinstance(envelope.get("decision"), str) else None,
        call_site=_cap(envelope["callSite"]) if isinstance(envelope.get("callSite"), str) else None,
        ran=ran,
        degraded=degraded,
        unparsed_findings=tuple(str(e) for e in bad[:20]),
    )
    return result, evaluation


def _cap(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
