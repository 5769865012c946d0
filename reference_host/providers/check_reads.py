"""What the Python check reads through its callbacks: the blobs each target needs, read in
batches, and the single files (`pyproject.toml`) its target Python comes from.

A blob the host refuses, leaves out or serves with the wrong bytes is never analysed; each one
comes back as a reason, for the Assessment's degraded coverage.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from asp_protocol.errors import AspError, ProtocolViolation
from reference_host.providers.assessment import degradation
from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.python_rules import PYTHON_GLOBS, SOURCE

READ_BATCH = 64
LISTINGS_KEPT = 16
# A baseline's listing never changes, so it is kept across evaluations in this provider process:
# `**/pyproject.toml` over Home Assistant's 45,750 files took ~0.8 s of every evaluation that met
# a file its parser refuses, the listing now once per baseline.
_BASELINE_LISTINGS: OrderedDict[str, dict[str, str]] = OrderedDict()


@dataclass
class Target:
    """One after-state path: `after` None means deleted; `before` is read only for `introduced`."""

    path: str
    after: str | None
    before: str | None
    before_path: str
    changed: bool = True


def both_states(target: Target, served: dict[str, bytes]) -> bool:
    """A changed Python module, not moved, whose before- and after-state *served* holds: the
    ones whose change the rules across files compare."""
    return bool(
        target.path.endswith(".py")
        and target.path == target.before_path
        and target.before
        and target.after
        and target.before != target.after
        and target.before in served
        and target.after in served
    )


def needed_blobs(target: Target, comparison: str) -> list[tuple[str, str]]:
    """(path, blob) pairs a target must read; empty when nothing can be found or introduced."""
    if target.after is None:
        return []
    if comparison == "all":
        return [(target.path, target.after)]
    if not target.changed or target.before == target.after:
        return []
    needed = [(target.path, target.after)]
    if target.before is not None:
        needed.append((target.before_path, target.before))
    return needed


async def baseline_files(
    callbacks: HostCallbacks, baseline: dict[str, Any] | None, globs: list[str]
) -> tuple[dict[str, str], bool] | None:
    """(path -> blob of the baseline's files *globs* list, whether the host cut it short), kept
    across evaluations when whole (a baseline's listing never changes); None when refused."""
    key = json.dumps([baseline, globs], sort_keys=True) if baseline else None
    if key is not None and key in _BASELINE_LISTINGS:
        _BASELINE_LISTINGS.move_to_end(key)
        return _BASELINE_LISTINGS[key], False
    try:
        listing = await callbacks.list_tree(globs=globs, baseline=baseline)
    except (AspError, ProtocolViolation):
        return None
    files = {e.path: e.blob_id for e in listing.entries if e.kind == "file"}
    if key is not None and not listing.truncated:
        _BASELINE_LISTINGS[key] = files
        while len(_BASELINE_LISTINGS) > LISTINGS_KEPT:
            _BASELINE_LISTINGS.popitem(last=False)
    return files, listing.truncated


@dataclass
class Listed:
    """The targets of a workspace-scope evaluation: the changed ones, then every other Python
    file of the baseline (each its own before and after)."""

    targets: list[Target]
    degraded: list[dict[str, Any]]
    truncated: bool = False


async def workspace_targets(
    callbacks: HostCallbacks, baseline: dict[str, Any] | None, changed: list[Target]
) -> Listed:
    try:
        listing = await callbacks.list_tree(globs=PYTHON_GLOBS, baseline=baseline)
    except (AspError, ProtocolViolation) as error:
        why = f"workspace/listTree failed, only changed files checked: {error}"
        return Listed(changed, [degradation(SOURCE, "incomplete", why)])
    touched = {t.path for t in changed} | {t.before_path for t in changed}
    unchanged = [
        Target(e.path, e.blob_id, e.blob_id, e.path, changed=False)
        for e in listing.entries
        if e.kind == "file" and e.path not in touched
    ]
    return Listed(changed + unchanged, [], listing.truncated)


def skipped_evidence(paths: list[str]) -> list[dict[str, Any]]:
    """The evidence message naming the files in scope the check does not read (none: nothing)."""
    skipped = sorted(set(paths))
    if not skipped:
        return []
    message = (
        f"{len(skipped)} non-Python file(s) in scope skipped; source python covers *.py, *.pyi "
        "and scripts whose first line runs python"
    )
    return [
        {
            "kind": "message",
            "message": message,
            "data": {"skipped": skipped[:200], "count": len(skipped)},
        }
    ]


async def read_batched(
    callbacks: HostCallbacks, wanted: list[str]
) -> tuple[dict[str, bytes], list[str]]:
    """The bytes of every blob of *wanted* the host served, and why each other one is missing."""
    served: dict[str, bytes] = {}
    missing: list[str] = []
    for start in range(0, len(wanted), READ_BATCH):
        batch = wanted[start : start + READ_BATCH]
        try:
            got, refused = await callbacks.read_each(batch)
        except ProtocolViolation as violation:
            got, refused = {}, {b: AspError(-32603, str(violation)) for b in batch}
        served.update(got)
        for blob in batch:
            if blob not in got and blob not in refused:
                why = (
                    "served bytes that do not match the id"
                    if blob in callbacks.mismatched
                    else "did not serve it"
                )
                refused[blob] = AspError(-32015, f"the host {why}")
        missing.extend(
            f"cannot read {blob[:80]}: {refusal.message[:120]}" for blob, refusal in refused.items()
        )
    return served, missing


class SingleFiles:
    """Project files the check reads one by one (`pyproject.toml`, lint configuration) as the
    change leaves them: the baseline's listing, with each changed file's after-state blob over
    it (None: deleted). Each set of globs is listed once per baseline (kept across evaluations);
    a refusal reads as absent and is not kept."""

    def __init__(
        self,
        callbacks: HostCallbacks,
        baseline: dict[str, Any] | None,
        after: dict[str, str | None],
    ) -> None:
        self._callbacks = callbacks
        self._baseline = baseline
        self._after = after
        self._listed: dict[tuple[str, ...], dict[str, str | None]] = {}

    async def current(
        self, globs: list[str], wanted: Callable[[str], bool]
    ) -> dict[str, str | None]:
        """path -> blob of the files *globs* list at the baseline, and the changed paths that
        *wanted* accepts at their after-state."""
        key = tuple(globs)
        if key not in self._listed:
            listed: dict[str, str | None] = dict(await self._baseline_files(globs))
            listed.update((p, b) for p, b in self._after.items() if wanted(p))
            self._listed[key] = listed
        return self._listed[key]

    async def _baseline_files(self, globs: list[str]) -> dict[str, str]:
        listed = await baseline_files(self._callbacks, self._baseline, globs)
        return listed[0] if listed is not None else {}

    async def read(self, blob: str) -> bytes | None:
        try:
            got, _ = await self._callbacks.read_each([blob])
        except ProtocolViolation:
            return None
        return got.get(blob)
