"""The one builder of `coverageDegradation` objects, shared by evaluate, inspect and status."""

from __future__ import annotations

from typing import Any

from asp_protocol.vocabulary import DegradationReason
from asp_protocol.wire import present


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
    return {
        "source": source,
        "reason": reason,
        "detail": detail[:1000],
        **present(requirement=requirement, capability=capability, providerState=provider_state),
    }
