"""What the Python check reads through its callbacks: the blobs each target needs, read in
batches, and the single files (`pyproject.toml`) its target Python comes from.

A blob the host refuses, leaves out or serves with the wrong bytes is never analysed; each one
comes back as a reason, for the Assessment's degraded coverage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asp_protocol.errors import AspError, ProtocolViolation
from reference_host.providers.callbacks import HostCallbacks

READ_BATCH = 64


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
    """Files read one by one at the session's baseline; a refusal reads as absent."""

    def __init__(self, callbacks: HostCallbacks, baseline: dict[str, Any] | None) -> None:
        self._callbacks = callbacks
        self._baseline = baseline

    async def blob_ids(self, globs: list[str]) -> dict[str, str]:
        """path -> blob id of the files matching *globs* that the provider may read."""
        try:
            listing = await self._callbacks.list_tree(globs=globs, baseline=self._baseline)
        except (AspError, ProtocolViolation):
            return {}
        return {e.path: e.blob_id for e in listing.entries if e.kind == "file"}

    async def read(self, blob: str) -> bytes | None:
        try:
            got, _ = await self._callbacks.read_each([blob])
        except ProtocolViolation:
            return None
        return got.get(blob)
