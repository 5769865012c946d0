"""Parity matching between an old tool's findings (real pyflakes) and ASP host-shaped findings."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from bridge.migration.findings import Finding, parse_findings
from bridge.migration.parity import ParityOptions, compare_findings, parity_from_decision
from bridge.migration.rules import asp_rule_kind, message_subject, old_rule_kind
from tests.support.old_tool import (
    PYFLAKES_SAMPLE,
    OldMessage,
    asp_diagnostics,
    run_pyflakes,
    sarif_log,
)

PYTHON_CODE = {
    "UnusedImport": "python/unused-import",
    "UndefinedName": "python/undefined-name",
    "RedefinedWhileUnused": "python/redefined-unused",
    "UnusedVariable": "python/unused-variable",
    "SyntaxError": "python/syntax-error",
}

AFTER = PYFLAKES_SAMPLE


def _sarif(rule: str, text: str, path: str, line: int) -> dict[str, Any]:
    """One SARIF result of the old tool: its rule, message and one-based start line."""
    location = {"artifactLocation": {"uri": path}, "region": {"startLine": line}}
    return {
        "ruleId": rule,
        "message": {"text": text},
        "locations": [{"physicalLocation": location}],
    }


def _diag(
    code: str,
    path: str,
    line: int,
    message: str,
    *,
    severity: str = "warning",
    char: int = 0,
    width: int = 1,
    fingerprint: str | None = None,
) -> dict[str, Any]:
    """One host diagnostic on a zero-based line; fingerprinted from code, path and message."""
    digest = hashlib.sha256(f"{code}{path}{message}".encode()).hexdigest()
    return {
        "code": code,
        "severity": severity,
        "source": "asp-python-check",
        "message": message,
        "location": {
            "path": path,
            "range": {
                "start": {"line": line, "char": char},
                "end": {"line": line, "char": char + width},
            },
        },
        "fingerprint": fingerprint or "sha256:" + digest,
    }


def _host_finding(diagnostic: dict[str, Any]) -> dict[str, Any]:
    """A verdict finding as an ASP host's decision carries it: advisory, no authority claims."""
    return {"diagnostic": diagnostic, "authority": {}, "disposition": "advisory"}


def host_findings(
    messages: list[OldMessage], *, drop: str = "", extra: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """What an ASP host's decision would carry for these messages: verdict findings, python/* codes."""
    out = []
    for m in messages:
        if m.rule == drop:
            continue
        severity = "error" if m.rule in ("UndefinedName", "SyntaxError") else "warning"
        diagnostic = _diag(
            PYTHON_CODE[m.rule], m.path, m.line - 1, m.text, severity=severity, char=m.col, width=3
        )
        out.append(_host_finding(diagnostic))
    return [*out, *(extra or [])]


def decision(
    findings: list[dict[str, Any]], degraded: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "pass": True,
        "decision": "allow",
        "callSite": "interactive",
        "findings": findings,
        "coverage": {
            "required": ["python-check"],
            "ran": ["python-check"],
            "degraded": degraded or [],
        },
    }


EXTRA_HOST_ONLY = _host_finding(
    _diag(
        "python/shadowed-builtin",
        "pkg/mod.py",
        4,
        "'id' shadows a builtin",
        severity="info",
        width=2,
        fingerprint="sha256:extra",
    )
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(AFTER, encoding="utf-8")
    return tmp_path


def _old(repo: Path, shape: str, text: str | None = None) -> tuple[list[OldMessage], list[Finding]]:
    if text is not None:
        (repo / "pkg" / "mod.py").write_text(text, encoding="utf-8")
    msgs = run_pyflakes(repo, ["pkg/mod.py"])
    data = sarif_log(msgs) if shape == "sarif" else asp_diagnostics(msgs)
    if text is not None:
        (repo / "pkg" / "mod.py").write_text(AFTER, encoding="utf-8")
    return msgs, list(parse_findings(data).findings)


@pytest.mark.parametrize("shape", ["sarif", "asp"])
def test_one_only_old_and_one_only_asp(repo: Path, shape: str) -> None:
    msgs, old = _old(repo, shape)
    host = decision(host_findings(msgs, drop="RedefinedWhileUnused", extra=[EXTRA_HOST_ONLY]))
    result, evaluation = parity_from_decision(old, host, change_paths=["pkg/mod.py"])
    c = result.counts
    assert (c.old, c.asp, c.matched, c.only_old, c.only_asp) == (
        len(msgs),
        len(msgs),
        len(msgs) - 1,
        1,
        1,
    )
    assert c.parity_blockers == 1 and c.only_old_outside_change == 0
    blocker = result.only_old[0]
    assert blocker.finding.rule.endswith("RedefinedWhileUnused") and blocker.parity_blocker
    assert blocker.rule_kind == "redefined-unused" and blocker.path_in_change is True
    assert "no 'redefined-unused' finding" in blocker.reason
    assert result.only_asp[0].finding.rule == "python/shadowed-builtin"
    assert result.only_asp[0].path_seen_by_old_tool
    assert all(m.method == "position" and m.line_delta == 0 for m in result.matched)
    assert evaluation.decision == "allow" and evaluation.ran == ("python-check",)


def test_an_old_finding_in_a_path_the_host_did_not_analyse_says_so(repo: Path) -> None:
    """Home Assistant's 3.13 code under a 3.11 check: the host lists the file as analysed by no
    required provider; "the host reported nothing in this file" read as a missing rule."""
    msgs, old = _old(repo, "sarif")
    unchecked = {"source": "pkg/mod.py", "reason": "unsupported", "detail": "not checked"}
    result, _ = parity_from_decision(old, decision([], [unchecked]), change_paths=["pkg/mod.py"])
    assert result.counts.only_old == len(msgs) > 0
    assert all("no required provider analysed this path" in o.reason for o in result.only_old)
    checked, _ = parity_from_decision(old, decision([]), change_paths=["pkg/mod.py"])
    assert all(o.reason == "the host reported nothing in this file" for o in checked.only_old)


def test_two_findings_on_one_line_pair_by_name(repo: Path) -> None:
    msgs, old = _old(repo, "sarif", "import sys, json, os\nprint(sys)\n")
    assert [m.text for m in msgs] == ["'json' imported but unused", "'os' imported but unused"]
    host = host_findings(list(reversed(msgs)))  # host lists them the other way round
    result, _ = parity_from_decision(old, decision(host))
    assert result.counts.matched == 2
    for m in result.matched:
        assert message_subject(m.old.message) == message_subject(m.asp.message)


def test_small_line_shift_matches_by_position(repo: Path) -> None:
    # the old tool ran on the file before one comment line was inserted at the top
    msgs_before, old = _old(repo, "sarif", AFTER)
    shifted = [OldMessage(m.path, m.rule, m.line + 1, m.col, m.text) for m in msgs_before]
    result = compare_findings(old, parse_findings(host_findings(shifted)).findings)
    assert result.counts.matched == len(old) and result.counts.only_old == 0
    assert {m.line_delta for m in result.matched} == {1}
    assert {m.method for m in result.matched} == {"position"}


def test_large_line_shift_matches_by_name_or_not_at_all(repo: Path) -> None:
    _, old = _old(repo, "sarif")
    msgs = run_pyflakes(repo, ["pkg/mod.py"])
    moved = [OldMessage(m.path, m.rule, m.line + 12, m.col, m.text) for m in msgs]
    host = parse_findings(host_findings(moved)).findings
    result = compare_findings(old, host)
    assert result.counts.matched == len(old)
    assert {m.method for m in result.matched} == {"subject"} and {
        m.line_delta for m in result.matched
    } == {12}
    strict = compare_findings(old, host, options=ParityOptions(match_shifted_by_subject=False))
    assert (
        strict.counts.matched == 0 and strict.counts.only_old == len(old) == strict.counts.only_asp
    )


def test_tolerance_zero_refuses_a_one_line_shift_without_names() -> None:
    old = parse_findings([_sarif("E999", "invalid syntax", "a.py", 3)]).findings
    host = parse_findings(
        [_diag("python/syntax-error", "a.py", 3, "invalid syntax")]
    ).findings  # zero-based 3 = line 4
    assert compare_findings(old, host).counts.matched == 1
    assert compare_findings(old, host, options=ParityOptions(line_tolerance=0)).counts.matched == 0


def test_different_rules_never_match_even_on_the_same_spot() -> None:
    old = parse_findings([_sarif("F401", "'os' imported but unused", "a.py", 1)]).findings
    host = parse_findings(
        [_diag("python/undefined-name", "a.py", 0, "undefined name 'os'")]
    ).findings
    result = compare_findings(old, host)
    assert (
        result.counts.matched == 0
        and result.only_old[0].reason == "the host reported no 'unused-import' finding in this file"
    )


def test_fingerprints_match_first_when_both_sides_have_them(repo: Path) -> None:
    msgs, _ = _old(repo, "asp")
    old_diags = asp_diagnostics(msgs, source="python")
    for d, m in zip(old_diags, msgs, strict=True):
        d["code"] = PYTHON_CODE[m.rule]
    host = [
        {"diagnostic": dict(d, location={"path": d["location"]["path"]})} for d in old_diags
    ]  # no ranges
    result = compare_findings(parse_findings(old_diags).findings, parse_findings(host).findings)
    assert result.counts.matched == len(msgs) and result.counts.matched_by == {
        "fingerprint": len(msgs)
    }


def test_unmapped_old_rules_are_listed_and_a_rule_map_pairs_them() -> None:
    old = parse_findings([_sarif("X123", "something odd", "a.py", 2)]).findings
    host = parse_findings([_diag("python/odd", "a.py", 1, "something odd")]).findings
    result = compare_findings(old, host)
    assert result.unmapped_old_rules == ("X123",) and result.only_old[0].rule_mapping == "unmapped"
    assert any("X123" in n for n in result.notes)
    mapped = compare_findings(old, host, options=ParityOptions(rule_map={"X123": "python/odd"}))
    assert mapped.counts.matched == 1


def test_findings_outside_the_change_are_flagged() -> None:
    old = parse_findings([_sarif("F401", "'os' imported but unused", "other.py", 1)]).findings
    result = compare_findings(old, (), change_paths=["a.py"])
    only = result.only_old[0]
    assert only.path_in_change is False and "not part of the evaluated change" in only.reason
    assert result.counts.only_old_outside_change == 1 and result.counts.parity_blockers == 1


def test_degraded_host_run_and_unreadable_host_findings_are_noted() -> None:
    bad = {"diagnostic": {"code": "python/x"}, "disposition": "advisory"}
    host = decision(
        [bad], degraded=[{"source": "asp-python-check", "reason": "crashed", "detail": "exit 3"}]
    )
    result, evaluation = parity_from_decision([], host)
    assert evaluation.degraded == ("crashed: asp-python-check: exit 3",)
    assert (
        len(evaluation.unparsed_findings) == 1 and "findings[0]" in evaluation.unparsed_findings[0]
    )
    assert any("degraded" in n for n in result.notes) and any(
        "could not be read" in n for n in result.notes
    )


def test_a_hostile_decision_does_not_break_parity() -> None:
    junks: list[Any] = [None, [], {"findings": "x", "coverage": 3}, {"findings": [1, None, "a"]}]
    for junk in junks:
        result, _ = parity_from_decision([], junk)
        assert result.counts.asp == 0


@pytest.mark.parametrize(
    ("rule", "message", "kind", "how"),
    [
        ("UnusedImport", "", "unused-import", "table"),
        ("F401", "", "unused-import", "table"),
        ("unused-import", "", "unused-import", "table"),
        ("pyflakes/UndefinedName", "", "undefined-name", "table"),
        ("python/undefined-name", "", "undefined-name", "namespaced"),
        ("acme/thing", "", "thing", "namespaced"),
        ("pyflakes", "'os' imported but unused", "unused-import", "message"),
        ("pyflakes", "undefined name 'x' in __all__", "undefined-export", "message"),
        ("pyflakes", "redefinition of unused 'g' from line 8", "redefined-unused", "message"),
        ("pyflakes", "no idea", None, "unmapped"),
    ],
)
def test_old_rule_kinds(rule: str, message: str, kind: str | None, how: str) -> None:
    assert old_rule_kind(rule, message) == (kind, how)


def test_asp_kinds_fold_aliases() -> None:
    assert asp_rule_kind("python/redefined-while-unused") == "redefined-unused"
    assert asp_rule_kind("python/unused-import") == "unused-import"


def test_every_pyflakes_class_maps_to_the_reference_providers_code() -> None:
    """The rule table and the ASP Python check provider agree on every pyflakes message class."""
    import inspect

    import pyflakes.messages

    from bridge.migration.rules import RULE_TABLE
    from reference_host.providers.python_rules import PYFLAKES_RULES

    classes = [
        name
        for name, cls in inspect.getmembers(pyflakes.messages, inspect.isclass)
        if issubclass(cls, pyflakes.messages.Message) and cls is not pyflakes.messages.Message
    ]
    assert classes
    for name in classes:
        assert name.casefold() in RULE_TABLE, f"pyflakes {name} has no rule kind"
        kind, how = old_rule_kind(name)
        assert how == "table" and kind == asp_rule_kind(PYFLAKES_RULES[name]), name
