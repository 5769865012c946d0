"""The host's shared state: workspace, trusted providers, supervisor, assurance mode, policy cache."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asp_protocol.vocabulary import CapabilityFamily
from reference_host.edit.proposals import ProposalStore
from reference_host.repo.workspace import Workspace, WorkTreeState
from reference_host.sessions.supervisor import Supervisor
from reference_host.status.memo import Memo
from reference_host.trust.manifests import NOT_CLAIMED, InstalledProvider, PinCheck, check_pin
from reference_host.trust.policy import POLICY_PATH, EffectivePolicy, PinnedProvider, parse_policy

if TYPE_CHECKING:
    from reference_host.status.drafts import Draft
    from reference_host.status.snapshot import Views


@dataclass
class HostContext:
    """Everything a request handler needs; built once by the CLI."""

    workspace: Workspace
    providers: dict[str, InstalledProvider]
    supervisor: Supervisor
    assurance_mode: str
    trusted_dir: Path | None = None
    proposals: ProposalStore = field(default_factory=ProposalStore)
    _policies: dict[str | None, EffectivePolicy] = field(default_factory=dict)
    _last_policy: EffectivePolicy | None = None
    #: the provider views of the last status-like request, kept with all their inputs
    views_memo: Memo[Views] = field(default_factory=Memo)
    #: per status-like method, its last drafted answer, kept with all its inputs
    drafts_memo: dict[object, Memo[Draft]] = field(default_factory=dict)

    def recent_policy(self) -> EffectivePolicy | None:
        """The policy the last reading of the workspace found: a guess to start work with while
        git reads the work tree, to be checked against `policy_for` of the new state."""
        return self._last_policy

    def knows_policy(self, state: WorkTreeState) -> bool:
        """Whether `policy_for(state)` is answered from the cache (no git, no file read)."""
        return (state.tree if state.tree is not None else state.rev) in self._policies

    def policy_for(self, state: WorkTreeState) -> EffectivePolicy:
        """The policy of the committed baseline (cached per tree: trees are immutable)."""
        key = state.tree if state.tree is not None else state.rev
        cached = self._policies.get(key)
        if cached is not None:
            self._last_policy = cached
            return cached
        raw: bytes | None
        if state.unusable is not None:
            raw = None  # the committed policy cannot be read; evaluations are unavailable anyway
        elif state.tree is None:
            raw = self.workspace.read_work_file(POLICY_PATH)
        else:
            entry = self.workspace.tree_entries(state.tree).get(POLICY_PATH)
            raw = self.workspace.git_blobs([entry[1]]).get(entry[1]) if entry else None
        policy = parse_policy(raw)
        if len(self._policies) > 8:
            self._policies.clear()
        self._policies[key] = policy
        self._last_policy = policy
        return policy

    def authority(
        self,
        pin: PinnedProvider,
        requirement_id: str,
        policy: EffectivePolicy,
        call_site: str | None = None,
    ) -> tuple[PinCheck, dict[str, Any]]:
        """Pin check plus the authorityEvidence object it yields (five axes, never conflated)."""
        check = check_pin(pin, self.providers.get(pin.id))
        grant: dict[str, Any] = {
            "granted": check.granted,
            "requirement": requirement_id,
            "policyDigest": policy.digest,
        }
        if call_site is not None:
            grant["callSite"] = call_site
        evidence = {
            "identity": check.identity,
            "integrity": check.integrity,
            "conformance": check.conformance,
            "isolation": self.assurance_mode,
            "authority": grant,
        }
        return check, evidence

    def provenance(
        self, provider_id: str, capability: CapabilityFamily, check: PinCheck | None = None
    ) -> dict[str, Any]:
        """A receipt's `providerProvenance` entry for one provider serving *capability*.

        With a pin check (a pinned provider), the check's three axes; without one (an advisory
        provider, or before the pin is judged), what the trusted manifest itself claims.
        """
        if check is not None:
            identity, integrity, conformance = check.identity, check.integrity, check.conformance
        else:
            installed = self.providers.get(provider_id)
            manifest = installed.manifest if installed else None
            claims = installed.conformance_claims if installed else []
            identity = manifest.provenance.publisher if manifest else provider_id
            integrity = manifest.artifact.fingerprint if manifest else "unknown"
            conformance = claims[0] if claims else NOT_CLAIMED
        return {
            "provider": provider_id,
            "capability": capability,
            "identity": identity,
            "integrity": integrity,
            "conformance": conformance,
        }
