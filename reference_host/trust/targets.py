"""The providers one outer request asks, and the authority each answer carries.

Inspect and edit choose their providers the same way: the pinned providers of the policy's
requirements for the capability family, else, with no such requirement, every trusted provider
whose manifest declares the family, asked as advisory (no pin, so never authoritative). Check
requests go through the evaluation's own runs (`evaluate/runs.py`), which track more per provider.
The receipt of an inspect or edit answer names every provider asked, with its evidence and
provenance, in one way (`receipt_parties`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from asp_protocol.vocabulary import CapabilityFamily
from reference_host.receipts import ReceiptParties
from reference_host.trust.manifests import InstalledProvider
from reference_host.trust.policy import PinnedProvider, Requirement


@dataclass
class ProviderTarget:
    """One provider asked for a family's answer: pinned by a requirement, or advisory."""

    provider_id: str
    coverage_id: str
    role: str = "advisory"
    pin: PinnedProvider | None = None
    requirement_id: str | None = None
    degraded: list[dict[str, Any]] = field(default_factory=list)
    evidence: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None


def advisory_ids(
    providers: Mapping[str, InstalledProvider], family: CapabilityFamily
) -> list[tuple[str, str]]:
    """(provider id, coverage id) of every trusted provider whose manifest declares *family*."""
    return [
        (provider_id, f"{provider_id}/{family}")
        for provider_id, installed in sorted(providers.items())
        if installed.manifest is not None and family in installed.manifest.capabilities
    ]


def pins_of(
    requirements: Iterable[tuple[str, Requirement]],
) -> list[tuple[str, Requirement, PinnedProvider]]:
    """(role, requirement, pin) for every pinned provider of *requirements*, in policy order."""
    return [
        (role, requirement, pin)
        for role, requirement in requirements
        for pin in requirement.authority.providers
    ]


def receipt_parties(targets: Iterable[ProviderTarget], ran: list[str]) -> ReceiptParties:
    """The receipt keywords naming who was asked: evidence, provider ids and provenance."""
    asked = list(targets)
    return ReceiptParties(
        authority_evidence=[t.evidence for t in asked if t.evidence is not None],
        provider_ids=[t.provider_id for t in asked] + ran,
        provenance=[t.provenance for t in asked if t.provenance is not None],
    )
