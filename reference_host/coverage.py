"""Degradations: the one builder of `coverageDegradation` objects (shared by evaluate, inspect and
status) and the details a user can act on in them: every validation error (bounded) and a provider's
own reasons for a non-complete Assessment (capped and marked untrusted, since the provider wrote them).
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import ValidationError

from asp_protocol.vocabulary import CapabilityFamily, DegradationReason
from asp_protocol.wire import present

MAX_ERRORS = 10
MAX_REASONS = 5
REASON_CAP = 200


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


def no_provider(family: CapabilityFamily, required: bool) -> dict[str, Any]:
    """The host's degradation when no trusted provider serves *family* at all."""
    return degradation(
        family,
        "missing-required-provider" if required else "missing",
        f"no trusted provider serves the {family} capability",
        capability=family,
    )


class Degradable(Protocol):
    """What a provider's run or target records its degradations on (read-only view)."""

    @property
    def provider_id(self) -> str: ...
    @property
    def requirement_id(self) -> str | None: ...
    @property
    def degraded(self) -> list[dict[str, Any]]: ...


def add_degradation(
    target: Degradable,
    capability: CapabilityFamily,
    reason: DegradationReason,
    detail: str,
    state: str | None = None,
) -> None:
    """Record on *target* a degradation of its provider, for its requirement and *capability*."""
    target.degraded.append(
        degradation(
            target.provider_id,
            reason,
            detail,
            requirement=target.requirement_id,
            capability=capability,
            provider_state=state,
        )
    )


def validation_summary(error: ValidationError, limit: int = MAX_ERRORS) -> str:
    """`N error(s): loc: msg; ...` with the first *limit* errors and how many more there were."""
    items = error.errors()
    shown = [
        f"{'.'.join(str(p) for p in item['loc'])[:120] or '(root)'}: {str(item['msg'])[:160]}"
        for item in items[:limit]
    ]
    text = f"{len(items)} error(s): " + "; ".join(shown)
    if len(items) > limit:
        text += f"; … {len(items) - limit} more"
    return text


def provider_reasons(coverage: Any) -> str:
    """The provider's own `coverage.degraded`/`unsupported` entries, capped, marked untrusted."""
    if not isinstance(coverage, dict):
        return ""
    entries: list[str] = []
    seen: set[str] = set()
    total = 0
    for key in ("degraded", "unsupported"):
        items = coverage.get(key)
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            text = " ".join(
                str(item.get(field, ""))[:REASON_CAP]
                for field in ("reason", "requirement", "detail")
                if item.get(field)
            )
            if text in seen:
                continue
            seen.add(text)
            total += 1
            if len(entries) < MAX_REASONS:
                entries.append(text)
    if not entries:
        return ""
    more = f"; … {total - len(entries)} more" if total > len(entries) else ""
    return "provider's own reasons [untrusted, capped]: " + "; ".join(entries) + more
