"""SARIF 2.1.0 results as findings: SARIF's 1-based lines and columns become zero-based here."""

from __future__ import annotations

from typing import Any

from bridge.migration.finding_model import (
    Finding,
    FindingsError,
    FindingsInput,
    Position,
    Severity,
    check_count,
    field_path,
    short,
    type_name,
)
from bridge.migration.paths import uri_to_path

SARIF_VERSION = "2.1.0"
SARIF_LEVELS: dict[str, Severity] = {
    "error": "error",
    "warning": "warning",
    "note": "info",
    "none": "info",
}


# -- SARIF ----------------------------------------------------------------------------------------


def parse_sarif_log(log: dict[str, Any], repo_root: str | None) -> FindingsInput:
    version = log.get("version")
    if version != SARIF_VERSION:
        raise FindingsError(
            f"SARIF version must be {SARIF_VERSION!r}, got {short(version)}", field="version"
        )
    runs = log.get("runs")
    if not isinstance(runs, list):
        raise FindingsError("SARIF log needs a `runs` array", field="runs")
    findings: list[Finding] = []
    tools: set[str] = set()
    index = 0
    for r, run in enumerate(runs):
        if not isinstance(run, dict):
            raise FindingsError(f"expected an object, got {type_name(run)}", pointer=f"runs[{r}]")
        tool = _driver_name(run, r)
        if tool:
            tools.add(tool)
        results = run.get("results")
        if results is None:
            continue  # SARIF: absent results means the run produced none to report
        if not isinstance(results, list):
            raise FindingsError("`results` must be an array", pointer=f"runs[{r}]", field="results")
        check_count(index + len(results))
        for i, item in enumerate(results):
            findings.append(sarif_result(item, index, f"runs[{r}].results[{i}]", repo_root, tool))
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


def sarif_result(
    item: Any, index: int, pointer: str, repo_root: str | None, tool: str | None
) -> Finding:
    def fail(reason: str, field: str = "") -> FindingsError:
        return FindingsError(reason, index=index, pointer=pointer, field=field)

    if not isinstance(item, dict):
        raise fail(f"expected a SARIF result object, got {type_name(item)}")
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
    if level not in SARIF_LEVELS:
        raise fail(f"must be one of {sorted(SARIF_LEVELS)}, got {short(level)}", "level")

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
        path=field_path(
            uri_to_path(uri),
            repo_root,
            index,
            pointer,
            "locations[0].physicalLocation.artifactLocation.uri",
        ),
        rule=rule,
        message=text,
        severity=SARIF_LEVELS[level],
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
                f"must be an integer >= 1 (SARIF is 1-based), got {short(value)}", f"{field}.{key}"
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
