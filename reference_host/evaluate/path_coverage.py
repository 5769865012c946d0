"""Which changed paths a required provider actually analysed — "allow" means every one was.

A provider says what it covered in its Assessment: `coverage.covered.scope` is `"changeset"` /
`"workspace"` (every changed path) or `{paths: [...]}` (only those paths and the paths under
them), and `covered.diagnosticSources` is empty when it covered nothing. A changed path that no
required provider covered is listed in the result's `coverage.degraded` as `unsupported`, with the
path as `source`: `exhaustive` is then false and the decision is never `allow`. Documentation
and configuration files count like code — an allow is a statement that every changed path was
analysed, so a change to a file kind no required provider reads is `indeterminate` (add a provider
for that kind, see the README "Built-in providers"). A call-site whose policy requires nothing
checks nothing and says so with `required: []`.
"""

from __future__ import annotations

from typing import Any

from asp_protocol.models import Assessment
from reference_host.coverage import degradation

#: Path entries listed one by one; past this, one entry counts the rest.
MAX_LISTED = 50
ALL = None


def covered_paths(assessment: Assessment | None, complete: bool) -> set[str] | None:
    """The path prefixes *assessment* covered; `ALL` (None) for the whole changeset."""
    if assessment is None:
        return set()
    covered = assessment.coverage.covered
    if isinstance(covered.scope, dict):
        return {p.strip("/") for p in covered.scope.get("paths", [])}
    if covered.diagnostic_sources and complete:
        return ALL
    return set()


def _covers(prefixes: set[str] | None, path: str) -> bool:
    if prefixes is None:
        return True
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def changed_paths(changeset: dict[str, Any]) -> list[str]:
    """Every path a change writes (a rename's new path; its old path is the same file)."""
    return list(dict.fromkeys(change["path"] for change in changeset["changes"]))


def unanalysed(paths: list[str], covered: list[set[str] | None]) -> list[str]:
    """The changed paths no required provider covered."""
    return [p for p in paths if not any(_covers(prefixes, p) for prefixes in covered)]


def unanalysed_degradations(missing: list[str], required: list[str]) -> list[dict[str, Any]]:
    """One `unsupported` entry per unanalysed path (capped), naming the requirements that ran."""
    names = ", ".join(required)[:200]
    entries = [
        degradation(
            path,
            "unsupported",
            f"changed path analysed by no required provider ({names}); not checked",
            capability="check",
        )
        for path in missing[:MAX_LISTED]
    ]
    if len(missing) > MAX_LISTED:
        entries.append(
            degradation(
                "changeset",
                "unsupported",
                f"{len(missing) - MAX_LISTED} more changed path(s) analysed by no required provider",
                capability="check",
            )
        )
    return entries
