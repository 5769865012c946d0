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
from typing import TYPE_CHECKING, Any, ClassVar

from asp_protocol.vocabulary import CallSite, CapabilityFamily, DegradationReason
from reference_host.coverage import add_degradation
from reference_host.receipts import ReceiptParties
from reference_host.trust.manifests import InstalledProvider
from reference_host.trust.policy import EffectivePolicy, PinnedProvider, Requirement

if TYPE_CHECKING:  # the context holds the trust objects; only its type is needed here
    from reference_host.context import HostContext


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
    family: ClassVar[CapabilityFamily]

    def degrade(self, reason: DegradationReason, detail: str, state: str | None = None) -> None:
        """Record a degradation of this provider, for its requirement and the target's family."""
        add_degradation(self, self.family, reason, detail, state)


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


def judge_authority(
    ctx: HostContext, target: ProviderTarget, policy: EffectivePolicy, call_site: CallSite
) -> bool:
    """Judge a pinned target's answer against its pin: evidence, provenance, and a
    `missing-authority` degradation when not granted. An advisory target has no pin: never granted.
    """
    if target.pin is None or target.requirement_id is None:
        return False
    check, evidence = ctx.authority(target.pin, target.requirement_id, policy, call_site)
    target.evidence = evidence
    if target.provenance is not None:  # only a provider that was launched has provenance
        target.provenance = ctx.provenance(target.provider_id, target.family, check)
    if not check.granted:
        target.degrade("missing-authority", check.mismatch_detail)
    return check.granted


def receipt_parties(targets: Iterable[ProviderTarget], ran: list[str]) -> ReceiptParties:
    """The receipt keywords naming who was asked: evidence, provider ids and provenance."""
    asked = list(targets)
    return ReceiptParties(
        authority_evidence=[t.evidence for t in asked if t.evidence is not None],
        provider_ids=[t.provider_id for t in asked] + ran,
        provenance=[t.provenance for t in asked if t.provenance is not None],
    )
