"""Migration parity under load and attack: indexed (work bounded by candidate pairs, not old x
host), refused past its budget or result limit with the input to shrink, stopped by cancellation,
and its text free of terminal and bidi control characters from host strings."""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bridge.config import BridgeSettings
from bridge.migration import matching
from bridge.migration.coverage import coverage_map
from bridge.migration.findings import Finding, Position
from bridge.migration.matching import Matcher, ParityTooLarge, Side, delta
from bridge.migration.parity import ParityOptions, compare_findings, parity_from_decision
from bridge.migration.report import ParitySection, build_report, render_text
from bridge.server import create_server
from tests.support.definitions import load_json
from tests.support.gitrepo import make_repo, write_files
from tests.support.mcp_helpers import assert_labelled

RULES = ("UnusedImport", "UndefinedName", "UnusedVariable")
CODES = {
    "UnusedImport": "python/unused-import",
    "UndefinedName": "python/undefined-name",
    "UnusedVariable": "python/unused-variable",
}
MESSAGES = {
    "UnusedImport": "'{}' imported but unused",
    "UndefinedName": "undefined name '{}'",
    "UnusedVariable": "local variable '{}' is assigned to but never used",
}


def _finding(i: int, origin: str, path: str, rule: str, name: str, line: int | None) -> Finding:
    start = Position(line=line, char=line % 7) if line is not None else None
    return Finding(
        index=i,
        pointer=f"[{i}]",
        origin=origin,  # type: ignore[arg-type]
        path=path,
        rule=CODES[rule] if origin == "asp" else rule,
        message=MESSAGES[rule].format(name),
        severity="warning",
        start=start,
        end=start,
        fingerprints=(f"fp{name}{line}",) if origin == "asp" and line and line % 5 == 0 else (),
    )


def _random_sides(seed: int, n_old: int, n_asp: int) -> tuple[list[Finding], list[Finding]]:
    rng = random.Random(seed)

    def one(i: int, origin: str) -> Finding:
        line = None if rng.random() < 0.1 else rng.randrange(0, 12)
        return _finding(
            i, origin, rng.choice(("a.py", "b.py")), rng.choice(RULES), rng.choice("xyz"), line
        )

    old = [one(i, "sarif") for i in range(n_old)]
    asp = [one(i, "asp") for i in range(n_asp)]
    for k, f in enumerate(old):  # some old findings share the host's fingerprints
        if rng.random() < 0.3 and asp:
            old[k] = f.model_copy(
                update={"fingerprints": asp[rng.randrange(len(asp))].fingerprints}
            )
    return old, asp


def _reference(olds: Sequence[Side], asps: Sequence[Side], tol: int) -> list[tuple[int, int, str]]:
    """The all-pairs matcher parity had before indexing, kept here as the specification."""
    free_old, free_asp = set(range(len(olds))), set(range(len(asps)))
    matched: list[tuple[int, int, str]] = []

    def take(cands: list[tuple[tuple[int, ...], int, int]], method: str) -> None:
        for _, o, a in sorted(cands):
            if o in free_old and a in free_asp:
                free_old.discard(o), free_asp.discard(a)
                matched.append((o, a, method))

    def pairs() -> list[tuple[int, int]]:
        return [
            (o, a)
            for o in sorted(free_old)
            for a in range(len(asps))
            if a in free_asp and asps[a].finding.path == olds[o].finding.path
        ]

    fp = []
    for o, a in pairs():
        if set(olds[o].finding.fingerprints) & set(asps[a].finding.fingerprints):
            d = delta(olds[o].finding, asps[a].finding) or (0, 0)
            fp.append(((*d, o, a), o, a))
    take(fp, "fingerprint")
    near = []
    for o, a in pairs():
        so, sa = olds[o], asps[a]
        if so.kind is None or so.kind != sa.kind:
            continue
        if so.subject and sa.subject and so.subject != sa.subject:
            continue
        dist = delta(so.finding, sa.finding)
        if dist is not None and dist[0] <= tol:
            near.append(((dist[0], int(so.subject != sa.subject), dist[1], o, a), o, a))
    take(near, "position")
    shifted = []
    for o, a in pairs():
        so, sa = olds[o], asps[a]
        if so.kind is not None and so.kind == sa.kind and so.subject and so.subject == sa.subject:
            d = delta(so.finding, sa.finding) or (0, 0)
            shifted.append(((*d, o, a), o, a))
    take(shifted, "subject")
    return sorted(matched)


@pytest.mark.parametrize("seed", range(12))
def test_the_indexed_matcher_pairs_exactly_like_the_all_pairs_rule(seed: int) -> None:
    from bridge.migration.parity import Side as ParitySide  # the sides parity builds
    from bridge.migration.rules import asp_rule_kind, message_subject, old_rule_kind

    old, asp = _random_sides(seed, 40, 30)
    tol = seed % 4

    def old_side(f: Finding) -> ParitySide:
        kind, how = old_rule_kind(f.rule, f.message, {})
        return Side(f, kind, how, message_subject(f.message))

    olds = [old_side(f) for f in old]
    asps = [Side(f, asp_rule_kind(f.rule), "namespaced", message_subject(f.message)) for f in asp]
    matcher = Matcher(olds, asps, tol, lambda: None)
    matcher.fingerprints()
    matcher.positions()
    matcher.subjects()
    assert sorted(matcher.matched) == _reference(olds, asps, tol)
    assert matcher.matched, "the random input must exercise matching"


def test_work_follows_candidate_pairs_not_old_times_host() -> None:
    """20,000 old x 2,000 host findings spread over 200 files: the matcher looks at a few pairs
    per old finding (old x host would be 4 * 10**7), and still pairs every host finding.
    The 100,000 x 10,000 figure is bench/parity_bench.py's."""
    old = [
        _finding(i, "sarif", f"m{i % 200}.py", RULES[i % 3], f"n{i}", (i // 200) * 3)
        for i in range(20_000)
    ]
    asp = [
        _finding(i, "asp", f"m{i % 200}.py", RULES[i % 3], f"n{i}", (i // 200) * 3)
        for i in range(2_000)
    ]
    seen: list[int] = []
    real_init = Matcher.__init__

    def spy(self: Matcher, *args: Any) -> None:
        real_init(self, *args)
        seen.append(id(self))
        spy.matcher = self  # type: ignore[attr-defined]

    Matcher.__init__ = spy  # type: ignore[method-assign]
    try:
        result = compare_findings(old, asp)
    finally:
        Matcher.__init__ = real_init  # type: ignore[method-assign]
    considered = spy.matcher.considered  # type: ignore[attr-defined]
    assert result.counts.matched == 2_000 and result.counts.only_old == 18_000
    assert considered <= 4 * len(old), considered


def test_a_pile_up_at_one_place_is_refused_naming_the_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(matching, "PAIR_BUDGET", 10_000)
    old = [_finding(i, "sarif", "hot.py", "UnusedImport", "x", 1) for i in range(300)]
    asp = [_finding(i, "asp", "hot.py", "UnusedImport", "x", 1) for i in range(100)]
    with pytest.raises(ParityTooLarge) as raised:
        compare_findings(old, asp)
    assert "hot.py" in str(raised.value) and "shrink `findings`" in str(raised.value)


@pytest.mark.anyio
async def test_cancellation_stops_matching_at_the_next_checkpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run like the tool runs it (worker thread, anyio's cancellation check as the checkpoint):
    once the caller's scope is cancelled, the thread stops at its next checkpoint."""
    monkeypatch.setattr(matching, "_CHECK_EVERY", 1)
    old = [_finding(i, "sarif", f"f{i}.py", "UnusedImport", "x", 1) for i in range(500)]
    calls = 0

    with anyio.CancelScope() as scope:

        def checkpoint() -> None:
            nonlocal calls
            calls += 1
            if calls == 3:
                anyio.from_thread.run_sync(scope.cancel)
            anyio.from_thread.check_cancelled()

        await anyio.to_thread.run_sync(
            functools.partial(compare_findings, old, old, checkpoint=checkpoint)
        )
    assert scope.cancelled_caught and calls == 3


HOSTILE = "ok\x1b[2J\x1b]0;pwned\x07\r\u202egnp.exe\u2066x\u200f"


@pytest.mark.needs_definitions
def test_report_text_carries_no_control_or_bidi_characters_from_host_strings() -> None:
    caps = copy.deepcopy(load_json("examples/core/capabilities.check-only.json")["result"])
    status = copy.deepcopy(load_json("examples/core/status.ready.json")["result"])
    status["host"]["name"] = HOSTILE
    decision = {
        "decision": HOSTILE,
        "callSite": HOSTILE,
        "coverage": {"ran": [HOSTILE], "degraded": [{"reason": HOSTILE, "detail": HOSTILE}]},
        "findings": [
            {
                "diagnostic": {
                    "code": "python/" + HOSTILE,
                    "severity": "warning",
                    "source": HOSTILE,
                    "message": HOSTILE,
                    "location": {"path": "a.py" + HOSTILE},
                }
            }
        ],
    }
    old = [_finding(0, "sarif", "b.py", "UnusedImport", HOSTILE, 2)]
    result, evaluation = parity_from_decision(old, decision, options=ParityOptions())
    section = ParitySection(ran=True, host_evaluation=evaluation, result=result)
    report = build_report(
        coverage_map(["judge"], capabilities=caps, status=status), status=status, parity=section
    )
    text = render_text(report)
    assert "pwned" in text  # the text is kept, its control characters are not
    for bad in ("\x1b", "\r", "\x07", "\u202e", "\u2066", "\u200f"):
        assert bad not in text


@pytest.mark.anyio
async def test_an_oversized_report_is_a_bridge_refusal_not_a_host_fault(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws", {"pkg/mod.py": "import sys\n"})
    write_files(repo, {"pkg/mod.py": "import os\nimport sys\n"})
    findings = [
        {
            "ruleId": "UnusedImport",
            "message": {"text": f"'m{i}' imported but unused {'x' * 200}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f"pkg/f{i}.py"},
                        "region": {"startLine": 1},
                    }
                }
            ],
        }
        for i in range(200)
    ]
    settings = BridgeSettings(repo=repo, timeout=60.0, max_result_bytes=20_000)
    with anyio.fail_after(90):
        async with Client(create_server(settings), mode="legacy") as client:  # type: ignore[arg-type]
            result = await client.call_tool("asp_migration_check", {"findings": findings})
    envelope = assert_labelled(result, is_error=True)
    error = envelope["error"]
    assert error["reason"] == "refused", error
    assert "max_result_bytes" in error["message"] and "Shrink `findings`" in error["message"]
    assert "200 old" in error["message"]
