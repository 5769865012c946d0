"""Old-tool findings parse strictly from SARIF 2.1.0 or ASP Diagnostic shape produced by real pyflakes."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from bridge.migration.findings import (
    FindingsError,
    load_findings,
    parse_findings,
    parse_host_findings,
)
from bridge.migration.paths import normalize_path
from tests.support.old_tool import (
    PYFLAKES_SAMPLE,
    OldMessage,
    asp_diagnostics,
    run_pyflakes,
    sarif_log,
    sarif_results,
)

SOURCE = PYFLAKES_SAMPLE


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def messages(workspace: Path) -> list[OldMessage]:
    found = run_pyflakes(workspace, ["pkg/mod.py", "broken.py"])
    assert {m.rule for m in found} >= {
        "UnusedImport",
        "UndefinedName",
        "RedefinedWhileUnused",
        "SyntaxError",
    }
    return found


def test_sarif_log_from_pyflakes_becomes_zero_based_findings(messages: list[OldMessage]) -> None:
    parsed = parse_findings(sarif_log(messages))
    assert parsed.format == "sarif" and parsed.tools == ("pyflakes",)
    assert len(parsed.findings) == len(messages)
    for m, f in zip(messages, parsed.findings, strict=True):
        assert (f.path, f.rule, f.message) == (m.path, m.rule, m.text)
        assert f.start is not None
        assert (f.start.line, f.start.char) == (m.line - 1, m.col)  # 1-based SARIF -> zero-based
        assert f.pointer.startswith("runs[0].results[")
    undefined = next(f for f in parsed.findings if f.rule == "UndefinedName")
    assert undefined.severity == "error" and undefined.tool == "pyflakes"


def test_bare_sarif_results_array_is_accepted(messages: list[OldMessage]) -> None:
    parsed = parse_findings(sarif_results(messages))
    assert parsed.format == "sarif" and len(parsed.findings) == len(messages)
    assert parsed.findings[2].pointer == "[2]"


def test_absolute_file_uris_become_repo_relative(
    workspace: Path, messages: list[OldMessage]
) -> None:
    results = sarif_results(messages, root=workspace, absolute_uris=True)
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith(
        "file:///"
    )
    parsed = parse_findings(results, repo_root=str(workspace))
    assert [f.path for f in parsed.findings] == [m.path for m in messages]


def test_asp_shape_from_pyflakes_keeps_fingerprints(messages: list[OldMessage]) -> None:
    diagnostics = asp_diagnostics(messages)
    parsed = parse_findings(diagnostics)
    assert parsed.format == "asp" and parsed.tools == ("pyflakes",)
    for d, f in zip(diagnostics, parsed.findings, strict=True):
        assert f.fingerprints == (d["fingerprint"],)
        assert f.start is not None and f.start.line == d["location"]["range"]["start"]["line"]


def test_host_verdict_findings_and_wrapper_objects_are_accepted(messages: list[OldMessage]) -> None:
    diagnostics = asp_diagnostics(messages)
    wrapped = [{"diagnostic": d, "authority": {}, "disposition": "advisory"} for d in diagnostics]
    assert len(parse_findings(wrapped).findings) == len(diagnostics)
    assert len(parse_findings({"diagnostics": diagnostics}).findings) == len(diagnostics)
    assert len(parse_findings({"findings": wrapped}).findings) == len(diagnostics)
    assert parse_findings(wrapped).findings[1].pointer == "[1].diagnostic"


def test_load_findings_reads_json_text(messages: list[OldMessage]) -> None:
    text = json.dumps(sarif_log(messages))
    assert len(load_findings(text).findings) == len(messages)
    assert load_findings("[]").findings == ()


def test_a_region_without_columns_and_a_file_level_result() -> None:
    base = {"ruleId": "F401", "message": {"text": "'os' imported but unused"}}
    with_line = {
        **base,
        "locations": [
            {"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 3}}}
        ],
    }
    file_level = {
        **base,
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "./b.py"}}}],
    }
    a, b = parse_findings([with_line, file_level]).findings
    assert a.start is not None and (a.start.line, a.start.char) == (2, 0)
    assert b.start is None and b.path == "b.py"
    assert b.severity == "warning"  # SARIF's default level


def _sarif_one(messages: list[OldMessage]) -> dict[str, Any]:
    return sarif_log(messages[:3])


MALFORMED_SARIF: list[tuple[str, Any, int | None, str]] = [
    # (case, mutation on a 3-result SARIF log, expected entry index, expected field)
    ("no rule", lambda r: r[1].pop("ruleId"), 1, "ruleId"),
    ("rule not a string", lambda r: r[2].__setitem__("ruleId", 7), 2, "ruleId"),
    ("no message", lambda r: r[0].pop("message"), 0, "message"),
    (
        "message text not a string",
        lambda r: r[1]["message"].__setitem__("text", ["x"]),
        1,
        "message.text",
    ),
    ("bad level", lambda r: r[2].__setitem__("level", "fatal"), 2, "level"),
    ("no locations", lambda r: r[1].__setitem__("locations", []), 1, "locations"),
    (
        "no uri",
        lambda r: r[2]["locations"][0]["physicalLocation"]["artifactLocation"].pop("uri"),
        2,
        "locations[0].physicalLocation.artifactLocation.uri",
    ),
    (
        "zero line (SARIF is 1-based)",
        lambda r: r[1]["locations"][0]["physicalLocation"]["region"].__setitem__("startLine", 0),
        1,
        "locations[0].physicalLocation.region.startLine",
    ),
    (
        "string column",
        lambda r: r[0]["locations"][0]["physicalLocation"]["region"].__setitem__(
            "startColumn", "3"
        ),
        0,
        "locations[0].physicalLocation.region.startColumn",
    ),
    (
        "region without startLine",
        lambda r: r[2]["locations"][0]["physicalLocation"]["region"].pop("startLine"),
        2,
        "locations[0].physicalLocation.region.startLine",
    ),
    (
        "end before start",
        lambda r: r[1]["locations"][0]["physicalLocation"]["region"].update(endLine=1, startLine=5),
        1,
        "locations[0].physicalLocation.region",
    ),
    (
        "fingerprints not strings",
        lambda r: r[0].__setitem__("fingerprints", {"a": 1}),
        0,
        "fingerprints",
    ),
    ("entry not an object", lambda r: r.__setitem__(2, "oops"), 2, ""),
]


@pytest.mark.parametrize(
    ("case", "mutate", "index", "field"), MALFORMED_SARIF, ids=[c[0] for c in MALFORMED_SARIF]
)
def test_malformed_sarif_names_the_entry_and_field(
    messages: list[OldMessage], case: str, mutate: Any, index: int | None, field: str
) -> None:
    log = copy.deepcopy(_sarif_one(messages))
    mutate(log["runs"][0]["results"])
    with pytest.raises(FindingsError) as caught:
        parse_findings(log)
    err = caught.value
    assert (err.index, err.field) == (index, field), str(err)
    assert err.pointer == f"runs[0].results[{index}]"
    assert f"entry {index}" in str(err) and (field in str(err))


MALFORMED_ASP: list[tuple[str, Any, int, str]] = [
    ("no code", lambda d: d[1].pop("code"), 1, "code"),
    ("bad severity", lambda d: d[0].__setitem__("severity", "fatal"), 0, "severity"),
    (
        "negative line",
        lambda d: d[2]["location"]["range"]["start"].__setitem__("line", -1),
        2,
        "location.range.start.line",
    ),
    ("no path", lambda d: d[1]["location"].pop("path"), 1, "location.path"),
    ("empty path", lambda d: d[1]["location"].__setitem__("path", ""), 1, "location.path"),
    ("unknown field", lambda d: d[0].__setitem__("decision", "allow"), 0, "decision"),
    ("no fingerprint", lambda d: d[2].pop("fingerprint"), 2, "fingerprint"),
]


@pytest.mark.parametrize(
    ("case", "mutate", "index", "field"), MALFORMED_ASP, ids=[c[0] for c in MALFORMED_ASP]
)
def test_malformed_asp_diagnostics_name_the_entry_and_field(
    messages: list[OldMessage], case: str, mutate: Any, index: int, field: str
) -> None:
    diagnostics = asp_diagnostics(messages[:3])
    mutate(diagnostics)
    with pytest.raises(FindingsError) as caught:
        parse_findings(diagnostics)
    assert (caught.value.index, caught.value.field) == (index, field), str(caught.value)
    assert caught.value.pointer == f"[{index}]"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"version": "2.0.0", "runs": []}, "SARIF version must be '2.1.0'"),
        ({"version": "2.1.0"}, "needs a `runs` array"),
        ({"version": "2.1.0", "runs": [{"results": {}}]}, "`results` must be an array"),
        (
            {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": 3}}, "results": []}]},
            "tool.driver.name",
        ),
        ({"something": 1}, "expected an array of findings"),
        ("findings", "expected an array or object, got string"),
        ([{"hello": 1}], "cannot tell an ASP Diagnostic"),
        ([3], "entry 0"),
    ],
)
def test_malformed_documents_are_clear_errors(data: Any, needle: str) -> None:
    with pytest.raises(FindingsError) as caught:
        parse_findings(data)
    assert needle in str(caught.value)


def test_mixed_shapes_fail_on_the_first_entry_of_the_other_shape(
    messages: list[OldMessage],
) -> None:
    mixed = [*sarif_results(messages[:2]), asp_diagnostics(messages[:1])[0]]
    with pytest.raises(FindingsError) as caught:
        parse_findings(mixed)
    assert caught.value.index == 2 and caught.value.field == "ruleId"


def test_forcing_a_format_applies_its_rules() -> None:
    with pytest.raises(FindingsError) as caught:
        parse_findings([{"code": "x/y"}], format="sarif")
    assert caught.value.field == "ruleId"


def test_invalid_json_text_names_line_and_column() -> None:
    with pytest.raises(FindingsError, match=r"not JSON .* line 2 column"):
        load_findings('[\n  {"ruleId": }\n]')


def test_sarif_runs_are_numbered_across_runs(messages: list[OldMessage]) -> None:
    log = sarif_log(messages[:2])
    log["runs"].append(copy.deepcopy(log["runs"][0]))
    log["runs"][1]["results"][1]["level"] = "bogus"
    with pytest.raises(FindingsError) as caught:
        parse_findings(log)
    assert caught.value.index == 3 and caught.value.pointer == "runs[1].results[1]"


def test_host_findings_are_read_entry_by_entry(messages: list[OldMessage]) -> None:
    wrapped: list[Any] = [
        {"diagnostic": d, "disposition": "advisory"} for d in asp_diagnostics(messages[:3])
    ]
    wrapped[1] = {"diagnostic": {"code": "x"}, "disposition": "advisory"}
    good, bad = parse_host_findings(wrapped)
    assert len(good) == 2 and len(bad) == 1 and bad[0].index == 1
    assert parse_host_findings("nope")[0] == ()


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("./a/b.py", None, "a/b.py"),
        ("a//b/../c.py", None, "a/c.py"),
        ("a\\b.py", None, "a/b.py"),
        ("/elsewhere/x.py", "/repo", "/elsewhere/x.py"),
    ],
)
def test_normalize_path(path: str, root: str | None, expected: str) -> None:
    assert normalize_path(path, root) == expected


def test_normalize_path_relativizes_inside_the_root(tmp_path: Path) -> None:
    assert normalize_path(str(tmp_path / "src" / "m.py"), str(tmp_path)) == "src/m.py"
    assert normalize_path(str(tmp_path / "src" / ".." / "m.py"), str(tmp_path)) == "m.py"
    assert normalize_path(str(tmp_path / ".." / "out.py"), str(tmp_path)) != "out.py"


def test_normalize_path_never_touches_the_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client's absolute path is client data: it is compared as a string, never stat'ed or
    resolved (a symlink inside the repository pointing out of it is not followed either)."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path)
    normalize_path("/x", str(root))  # the configured root's spellings are cached once
    touched: list[str] = []

    def spy(name: str) -> Any:
        real = getattr(os.path, name)

        def wrapper(p: Any, *a: Any, **k: Any) -> Any:
            touched.append(str(p))
            return real(p, *a, **k)

        return wrapper

    for name in ("realpath", "exists", "isfile", "isdir", "islink", "lexists"):
        monkeypatch.setattr(os.path, name, spy(name))
    monkeypatch.setattr(os, "stat", spy("realpath"))
    monkeypatch.setattr(os, "lstat", spy("realpath"))
    assert normalize_path(str(root / "out" / "secret.py"), str(root)) == "out/secret.py"
    assert normalize_path("/etc/passwd", str(root)) == "/etc/passwd"
    assert normalize_path(str(root / "src" / "a.py"), str(root)) == "src/a.py"
    assert touched == []
