"""The one builder of `coverageDegradation` objects, shared by evaluate, inspect and status."""

from __future__ import annotations

from typing import Any

from asp_protocol.vocabulary import DegradationReason


def degradation(
    source: str,
    reason: DegradationReason,
    detail: str,
    *,
    requirement: str | None = None,
    capability: str | None = None,
    provider_state: str | None = None,
) -> dict[str, Any]:
    """A `coverageDegradation` object with only the fields that are set."""
    entry: dict[str, Any] = {"source": source, "reason": reason, "detail": detail[:1000]}
    if requirement is not None:
        entry["requirement"] = requirement
    if capability is not None:
        entry["capability"] = capability
    if provider_state is not None:
        entry["providerState"] = provider_state
    return entry
