"""The indexed one-to-one matcher behind migration parity (bounded work, cancellable).

Findings are indexed by (path, fingerprint), (path, rule kind, line) and (path, rule kind,
subject), so matching costs what the candidate pairs cost, not old x host findings; a pile-up
past PAIR_BUDGET pairs is refused (`ParityTooLarge`) rather than ground through. The pass order
and tie-breaks are the parity rules of `bridge.migration.parity`.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from bridge.migration.findings import Finding
from bridge.migration.rules import RuleHow

MatchMethod = Literal["fingerprint", "position", "subject"]


@dataclass
class Side:
    finding: Finding
    kind: str | None
    how: RuleHow
    subject: str | None


def line_of(f: Finding) -> int | None:
    return f.start.line if f.start else None


def delta(old: Finding, asp: Finding) -> tuple[int, int] | None:
    """(line, char) distance, (0, 0) for two file-level findings, None when only one has a range."""
    if old.start is None and asp.start is None:
        return 0, 0
    if old.start is None or asp.start is None:
        return None
    return abs(asp.start.line - old.start.line), abs(asp.start.char - old.start.char)


class ParityTooLarge(ValueError):
    """The findings pile up at one place past what the bridge matches in one call (a bridge
    refusal naming the input to shrink, never a partial or guessed parity)."""


Checkpoint = Callable[[], None]
PAIR_BUDGET = 2_000_000  # candidate pairs considered in one call, across the three passes
_CHECK_EVERY = 2048


def no_checkpoint() -> None:
    return None


class Matcher:
    """Greedy one-to-one matching over indexes by (path, fingerprint), (path, rule kind, line)
    and (path, rule kind, subject), so the work is proportional to the candidate pairs that can
    match, not to old x host findings. *checkpoint* runs every few thousand steps; in a worker
    thread it raises when the caller was cancelled or ran out of time."""

    def __init__(
        self, olds: list[Side], asps: list[Side], line_tolerance: int, checkpoint: Checkpoint
    ) -> None:
        self.olds, self.asps, self.checkpoint = olds, asps, checkpoint
        self.line_tolerance = line_tolerance
        self.free_old = set(range(len(olds)))
        self.free_asp = set(range(len(asps)))
        self.matched: list[tuple[int, int, MatchMethod]] = []
        self.considered = 0
        self.by_fp: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.by_subject: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        self.file_level: dict[tuple[str, str], list[int]] = defaultdict(list)
        ranged: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        for a, side in enumerate(asps):
            f = side.finding
            for fp in set(f.fingerprints):
                self.by_fp[(f.path, fp)].append(a)
            if side.kind is None:
                continue
            if side.subject:
                self.by_subject[(f.path, side.kind, side.subject)].append(a)
            if f.start is None:
                self.file_level[(f.path, side.kind)].append(a)
            else:
                ranged[(f.path, side.kind)].append((f.start.line, a))
        self.ranged = {key: sorted(items) for key, items in ranged.items()}
        self.lines = {key: [line for line, _ in items] for key, items in self.ranged.items()}

    def _count(self, n: int, path: str) -> None:
        self.considered += n
        if self.considered > PAIR_BUDGET:
            raise ParityTooLarge(
                f"more than {PAIR_BUDGET} candidate finding pairs (e.g. in {path[:200]!r}): too "
                "many old and host findings share a path, rule and line; shrink `findings` (one "
                "file or rule at a time), lower `line_tolerance`, or narrow the change (`paths`)"
            )

    def take(self, candidates: list[tuple[tuple[int, ...], int, int]], method: MatchMethod) -> None:
        for _, o, a in sorted(candidates):
            if o in self.free_old and a in self.free_asp:
                self.free_old.discard(o)
                self.free_asp.discard(a)
                self.matched.append((o, a, method))

    def _each_old(self) -> Iterable[tuple[int, Side]]:
        for step, o in enumerate(sorted(self.free_old)):
            if step % _CHECK_EVERY == 0:
                self.checkpoint()
            yield o, self.olds[o]

    def fingerprints(self) -> None:
        found: list[tuple[tuple[int, ...], int, int]] = []
        for o, so in self._each_old():
            f = so.finding
            seen = {a for fp in set(f.fingerprints) for a in self.by_fp.get((f.path, fp), ())}
            self._count(len(seen), f.path)
            for a in sorted(seen & self.free_asp):
                d = delta(f, self.asps[a].finding) or (0, 0)
                found.append(((*d, o, a), o, a))
        self.take(found, "fingerprint")

    def _near(self, so: Side) -> Iterable[int]:
        f = so.finding
        key = (f.path, so.kind or "")
        if f.start is None:
            return self.file_level.get(key, ())
        lines = self.lines.get(key)
        if not lines:
            return ()
        tol = self.line_tolerance
        lo = bisect.bisect_left(lines, f.start.line - tol)
        hi = bisect.bisect_right(lines, f.start.line + tol)
        return (a for _, a in self.ranged[key][lo:hi])

    def positions(self) -> None:
        found: list[tuple[tuple[int, ...], int, int]] = []
        for o, so in self._each_old():
            if so.kind is None:
                continue
            near = list(self._near(so))
            self._count(len(near), so.finding.path)
            for a in near:
                sa = self.asps[a]
                if a not in self.free_asp or (
                    so.subject and sa.subject and so.subject != sa.subject
                ):
                    continue
                dist = delta(so.finding, sa.finding)
                if dist is not None and dist[0] <= self.line_tolerance:
                    found.append(((dist[0], int(so.subject != sa.subject), dist[1], o, a), o, a))
        self.take(found, "position")

    def subjects(self) -> None:
        found: list[tuple[tuple[int, ...], int, int]] = []
        for o, so in self._each_old():
            if so.kind is None or not so.subject:
                continue
            same = self.by_subject.get((so.finding.path, so.kind, so.subject), ())
            self._count(len(same), so.finding.path)
            for a in same:
                if a in self.free_asp:
                    d = delta(so.finding, self.asps[a].finding) or (0, 0)
                    found.append(((*d, o, a), o, a))
        self.take(found, "subject")
