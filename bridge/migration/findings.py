"""Old-tool findings in, normalized findings out: ASP Diagnostics or SARIF 2.1.0 results, parsed strictly.

The findings come from an agent's run of an old tool, so a bad entry is an input error that names
the entry (index and JSON pointer) and the field, never a silent skip. SARIF's 1-based lines and
columns become ASP's zero-based positions here, in one place.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ValidationError

from asp_protocol.models import Diagnostic
from bridge.migration.base import Model
from bridge.migration.paths import normalize_path, uri_to_path

FindingsFormat = Literal["asp", "sarif"]
Severity = Literal["error", "warning", "info"]
MAX_FINDINGS = 100_000
SARIF_VERSION = "2.1.0"
_SARIF_LEVELS: dict[str, Severity] = {
    "error": "error",
    "warning": "warning",
    "note": "info",
    "none": "info",
}
_SARIF_KEYS = frozenset({"ruleId", "rule", "locations", "level", "ruleIndex", "kind"})
_ASP_KEYS = frozenset({"code", "location", "fingerprint", "severity", "diagnostic", "source"})


class Position(Model):
    line: int
    char: int


class Finding(Model):
    """One finding, whichever tool produced it: repo-relative path, rule, zero-based range."""

    index: int
    pointer: str
    origin: FindingsFormat
    path: str
    rule: str
    message: str
    severity: Severity
    start: Position | None = None
    end: Position | None = None
    fingerprints: tuple[str, ...] = ()
    tool: str | None = None


class FindingsInput(Model):
    format: FindingsFormat
    tools: tuple[str, ...] = ()
    findings: tuple[Finding, ...]


class FindingsError(ValueError):
    """Malformed findings input; names the bad entry (index, JSON pointer) and field."""

    def __init__(
        self, reason: str, *, index: int | None = None, pointer: str = "", field: str = ""
    ) -> None:
        self.reason = reason
        self.index = index
        self.pointer = pointer
        self.field = field
        where = []
        if index is not None:
            where.append(f"entry {index} ({pointer})" if pointer else f"entry {index}")
        elif pointer:
            where.append(pointer)
        if field:
            where.append(f"field '{field}'")
        prefix = "malformed findings" + (": " + ", ".join(where) if where else "")
        super().__init__(f"{prefix}: {reason}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "index": self.index,
            "pointer": self.pointer,
            "field": self.field,
        }


def load_findings(
    text: str, *, format: FindingsFormat | Literal["auto"] = "auto", repo_root: str | None = None
) -> FindingsInput:
    """Parse findings from JSON text (a file's content); bad JSON names the line and column."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FindingsError(
            f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    return parse_findings(data, format=format, repo_root=repo_root)


def parse_findings(
    data: Any, *, format: FindingsFormat | Literal["auto"] = "auto", repo_root: str | None = None
) -> FindingsInput:
    """Accept a list of ASP Diagnostics (or host verdict findings), a list of SARIF results,
    a SARIF 2.1.0 log, or an object holding `diagnostics`/`findings`; reject anything else."""
    if isinstance(data, dict):
        if "runs" in data or "version" in data:
            return _parse_sarif_log(data, repo_root)
        for key in ("diagnostics", "findings"):
            if key in data and isinstance(data[key], list):
                return _parse_list(data[key], format, repo_root, prefix=f"{key}")
        raise FindingsError(
            "expected an array of findings, a SARIF 2.1.0 log (with `runs`), "
            "or an object with a `diagnostics`/`findings` array"
        )
    if isinstance(data, list):
        return _parse_list(data, format, repo_root, prefix="")
    raise FindingsError(f"expected an array or object, got {_type_name(data)}")


def _parse_list(
    items: list[Any],
    format: FindingsFormat | Literal["auto"],
    repo_root: str | None,
    *,
    prefix: str,
) -> FindingsInput:
    _check_count(len(items))
    chosen = format if format != "auto" else _detect(items, prefix)
    if chosen == "sarif":
        findings = tuple(
            _sarif_result(item, i, f"{prefix}[{i}]", repo_root, None)
            for i, item in enumerate(items)
        )
    else:
        findings = tuple(
            _asp_entry(item, i, f"{prefix}[{i}]", repo_root) for i, item in enumerate(items)
        )
    tools = tuple(sorted({f.tool for f in findings if f.tool}))
    return FindingsInput(format=chosen, tools=tools, findings=findings)


def _detect(items: list[Any], prefix: str) -> FindingsFormat:
    if not items:
        return "asp"
    first = items[0]
    if not isinstance(first, dict):
        raise FindingsError(
            f"expected an object, got {_type_name(first)}", index=0, pointer=f"{prefix}[0]"
        )
    keys = set(first)
    if keys & _SARIF_KEYS and not keys & {"code", "location", "diagnostic"}:
        return "sarif"
    if keys & _ASP_KEYS:
        return "asp"
    raise FindingsError(
        "cannot tell an ASP Diagnostic (code, location, ...) from a SARIF result (ruleId, locations, ...)",
        index=0,
        pointer=f"{prefix}[0]",
    )


# -- ASP Diagnostics ----------------------------------------------------------------------------


def _asp_entry(item: Any, index: int, pointer: str, repo_root: str | None) -> Finding:
    if not isinstance(item, dict):
        raise FindingsError(
            f"expected an object, got {_type_name(item)}", index=index, pointer=pointer
        )
    raw = item
    if "diagnostic" in item and "code" not in item:
        raw = item["diagnostic"]  # a host verdict finding wraps the provider's Diagnostic
        pointer = f"{pointer}.diagnostic"
        if not isinstance(raw, dict):
            raise FindingsError(
                f"expected an object, got {_type_name(raw)}", index=index, pointer=pointer
            )
    try:
        diag = Diagnostic.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise FindingsError(
            f"not an ASP Diagnostic: {first['msg']}",
            index=index,
            pointer=pointer,
            field=_loc(first["loc"]),
        ) from None
    rng = diag.location.range
    return Finding(
        index=index,
        pointer=pointer,
        origin="asp",
        path=_field_path(diag.location.path, repo_root, index, pointer, "location.path"),
        rule=diag.code,
        message=diag.message,
        severity=diag.severity,
        start=Position(line=rng.start.line, char=rng.start.char) if rng else None,
        end=Position(line=rng.end.line, char=rng.end.char) if rng else None,
        fingerprints=(diag.fingerprint,) if diag.fingerprint else (),
        tool=diag.source or None,
    )


# -- SARIF ----------------------------------------------------------------------------------------


def _parse_sarif_log(log: dict[str, Any], repo_root: str | None) -> FindingsInput:
    version = log.get("version")
    if version != SARIF_VERSION:
        raise FindingsError(
            f"SARIF version must be {SARIF_VERSION!r}, got {_short(version)}", field="version"
        )
    runs = log.get("runs")
    if not isinstance(runs, list):
        raise FindingsError("SARIF log needs a `runs` array", field="runs")
    findings: list[Finding] = []
    tools: set[str] = set()
    index = 0
    for r, run in enumerate(runs):
        if not isinstance(run, dict):
            raise FindingsError(f"expected an object, got {_type_name(run)}", pointer=f"runs[{r}]")
        tool = _driver_name(run, r)
        if tool:
            tools.add(tool)
        results = run.get("results")
        if results is None:
            continue  # SARIF: absent results means the run produced none to report
        if not isinstance(results, list):
            raise FindingsError("`results` must be an array", pointer=f"runs[{r}]", field="results")
        _check_count(index + len(results))
        for i, item in enumerate(results):
            findings.append(_sarif_result(item, index, f"runs[{r}].results[{i}]", repo_root, tool))
            index += 1
    return FindingsInput(format="sarif", tools=tuple(sorted(tools)), findings=tuple(findings))


def _driver_name(run: dict[str, Any], r: int) -> str | None:
    tool = run.get("tool")
    if tool is None:
        return None
    driver = tool.get("driver") if isinstance(tool, dict) else None
    name = driver.get("name") if isinstance(driver, dict) else None
    if not isinstance(name, str):
        raise FindingsError(
            "`tool.driver.name` must be a string", pointer=f"runs[{r}]", field="tool.driver.name"
        )
    return name


def _sarif_result(
    item: Any, index: int, pointer: str, repo_root: str | None, tool: str | None
) -> Finding:
    def fail(reason: str, field: str = "") -> FindingsError:
        return FindingsError(reason, index=index, pointer=pointer, field=field)

    if not isinstance(item, dict):
        raise fail(f"expected a SARIF result object, got {_type_name(item)}")
    rule = item.get("ruleId")
    if rule is None and isinstance(item.get("rule"), dict):
        rule = item["rule"].get("id")
        if rule is not None and not isinstance(rule, str):
            raise fail("must be a non-empty string", "rule.id")
    if rule is None:
        raise fail("a rule is required for parity matching (`ruleId` or `rule.id`)", "ruleId")
    if not isinstance(rule, str) or not rule:
        raise fail("must be a non-empty string", "ruleId")

    message = item.get("message")
    if not isinstance(message, dict):
        raise fail("required object with `text`", "message")
    text = message.get("text", message.get("id"))
    if not isinstance(text, str):
        raise fail("must be a string", "message.text")

    level = item.get("level", "warning")
    if level not in _SARIF_LEVELS:
        raise fail(f"must be one of {sorted(_SARIF_LEVELS)}, got {_short(level)}", "level")

    locations = item.get("locations")
    if not isinstance(locations, list) or not locations:
        raise fail(
            "at least one location with a file path is required for parity matching", "locations"
        )
    physical = locations[0].get("physicalLocation") if isinstance(locations[0], dict) else None
    if not isinstance(physical, dict):
        raise fail("required object", "locations[0].physicalLocation")
    artifact = physical.get("artifactLocation")
    uri = artifact.get("uri") if isinstance(artifact, dict) else None
    if not isinstance(uri, str) or not uri:
        raise fail(
            "must be a non-empty string", "locations[0].physicalLocation.artifactLocation.uri"
        )
    start, end = _sarif_region(physical.get("region"), fail)

    fingerprints: list[str] = []
    for key in ("fingerprints", "partialFingerprints"):
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise fail("must be an object of strings", key)
        fingerprints.extend(value[k] for k in sorted(value))

    return Finding(
        index=index,
        pointer=pointer,
        origin="sarif",
        path=_field_path(
            uri_to_path(uri),
            repo_root,
            index,
            pointer,
            "locations[0].physicalLocation.artifactLocation.uri",
        ),
        rule=rule,
        message=text,
        severity=_SARIF_LEVELS[level],
        start=start,
        end=end,
        fingerprints=tuple(fingerprints),
        tool=tool,
    )


def _sarif_region(region: Any, fail: Any) -> tuple[Position | None, Position | None]:
    """SARIF regions are 1-based (lines and columns); ASP positions are zero-based."""
    if region is None:
        return None, None
    field = "locations[0].physicalLocation.region"
    if not isinstance(region, dict):
        raise fail("must be an object", field)
    values: dict[str, int] = {}
    for key in ("startLine", "startColumn", "endLine", "endColumn"):
        value = region.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise fail(
                f"must be an integer >= 1 (SARIF is 1-based), got {_short(value)}", f"{field}.{key}"
            )
        values[key] = value
    if "startLine" not in values:
        raise fail("required (line-based regions only)", f"{field}.startLine")
    start_line = values["startLine"]
    start_col = values.get("startColumn", 1)
    end_line = values.get("endLine", start_line)
    end_col = values.get("endColumn", start_col if end_line == start_line else 1)
    if (end_line, end_col) < (start_line, start_col):
        raise fail("region ends before it starts", field)
    return (
        Position(line=start_line - 1, char=start_col - 1),
        Position(line=end_line - 1, char=end_col - 1),
    )


# -- paths and helpers ----------------------------------------------------------------------------


def _field_path(path: str, repo_root: str | None, index: int, pointer: str, field: str) -> str:
    normalized = normalize_path(path, repo_root)
    if not normalized:
        raise FindingsError("path is empty", index=index, pointer=pointer, field=field)
    return normalized


def _check_count(count: int) -> None:
    if count > MAX_FINDINGS:
        raise FindingsError(f"too many findings ({count} > {MAX_FINDINGS})")


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def parse_host_findings(
    items: Any, repo_root: str | None = None
) -> tuple[tuple[Finding, ...], tuple[FindingsError, ...]]:
    """A host decision's `findings` (verdict findings wrapping Diagnostics), read as untrusted data:
    each entry that does not parse is returned as an error instead of aborting the whole check."""
    if not isinstance(items, list):
        return (), (FindingsError("host decision `findings` is not an array", field="findings"),)
    good: list[Finding] = []
    bad: list[FindingsError] = []
    for i, item in enumerate(items[:MAX_FINDINGS]):
        try:
            good.append(_asp_entry(item, i, f"findings[{i}]", repo_root))
        except FindingsError as exc:
            bad.append(exc)
    return tuple(good), tuple(bad)
