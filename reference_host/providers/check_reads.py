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
from reference_host.providers.callbacks import HostCallbacks

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
        key = json.dumps([self._baseline, globs], sort_keys=True) if self._baseline else None
        if key is not None and key in _BASELINE_LISTINGS:
            _BASELINE_LISTINGS.move_to_end(key)
            return _BASELINE_LISTINGS[key]
        try:
            listing = await self._callbacks.list_tree(globs=globs, baseline=self._baseline)
        except (AspError, ProtocolViolation):
            return {}
        files = {e.path: e.blob_id for e in listing.entries if e.kind == "file"}
        if key is not None and not listing.truncated:
            _BASELINE_LISTINGS[key] = files
            while len(_BASELINE_LISTINGS) > LISTINGS_KEPT:
                _BASELINE_LISTINGS.popitem(last=False)
        return files

    async def read(self, blob: str) -> bytes | None:
        try:
            got, _ = await self._callbacks.read_each([blob])
        except ProtocolViolation:
            return None
        return got.get(blob)
