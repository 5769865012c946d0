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
from bridge.migration.finding_model import (
    MAX_FINDINGS,
    Finding,
    FindingsError,
    FindingsFormat,
    FindingsInput,
    Position,
    check_count,
    field_path,
    type_name,
)
from bridge.migration.paths import normalize_path
from bridge.migration.sarif import parse_sarif_log, sarif_result

__all__ = [
    "Finding",
    "FindingsError",
    "FindingsInput",
    "Position",
    "load_findings",
    "normalize_path",
    "parse_findings",
    "parse_host_findings",
]


_SARIF_KEYS = frozenset({"ruleId", "rule", "locations", "level", "ruleIndex", "kind"})
_ASP_KEYS = frozenset({"code", "location", "fingerprint", "severity", "diagnostic", "source"})


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
            return parse_sarif_log(data, repo_root)
        for key in ("diagnostics", "findings"):
            if key in data and isinstance(data[key], list):
                return _parse_list(data[key], format, repo_root, prefix=f"{key}")
        raise FindingsError(
            "expected an array of findings, a SARIF 2.1.0 log (with `runs`), "
            "or an object with a `diagnostics`/`findings` array"
        )
    if isinstance(data, list):
        return _parse_list(data, format, repo_root, prefix="")
    raise FindingsError(f"expected an array or object, got {type_name(data)}")


def _parse_list(
    items: list[Any],
    format: FindingsFormat | Literal["auto"],
    repo_root: str | None,
    *,
    prefix: str,
) -> FindingsInput:
    check_count(len(items))
    chosen = format if format != "auto" else _detect(items, prefix)
    if chosen == "sarif":
        findings = tuple(
            sarif_result(item, i, f"{prefix}[{i}]", repo_root, None) for i, item in enumerate(items)
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
            f"expected an object, got {type_name(first)}", index=0, pointer=f"{prefix}[0]"
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
            f"expected an object, got {type_name(item)}", index=index, pointer=pointer
        )
    raw = item
    if "diagnostic" in item and "code" not in item:
        raw = item["diagnostic"]  # a host verdict finding wraps the provider's Diagnostic
        pointer = f"{pointer}.diagnostic"
        if not isinstance(raw, dict):
            raise FindingsError(
                f"expected an object, got {type_name(raw)}", index=index, pointer=pointer
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
        path=field_path(diag.location.path, repo_root, index, pointer, "location.path"),
        rule=diag.code,
        message=diag.message,
        severity=diag.severity,
        start=Position(line=rng.start.line, char=rng.start.char) if rng else None,
        end=Position(line=rng.end.line, char=rng.end.char) if rng else None,
        fingerprints=(diag.fingerprint,) if diag.fingerprint else (),
        tool=diag.source or None,
    )


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


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
