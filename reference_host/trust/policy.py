"""Repository policy: `.asp/asp.json` from the baseline tree, validated, or the built-in default.

The policy is read from the committed baseline, never from the candidate (docs/architecture.md#policy-and-authority). A policy
with unknown or forbidden keys (`command`, `host`, `launch`, ...) is `rejected`: the host reports
it and fails closed instead of guessing or crashing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import Field, ValidationError

from asp_protocol import ASP_PROTOCOL_VERSION
from asp_protocol.canonical import digest, digest_bytes, strict_loads
from asp_protocol.policy_rules import policy_rules
from asp_protocol.vocabulary import CALL_SITES, AssuranceMode, CallSite, CapabilityFamily
from asp_protocol.wire import Frozen
from reference_host.providers import (
    PROVIDER_VERSION,
    PUBLISHER,
    PYTHON_CHECK,
    PYTHON_EDIT,
    BuiltinProvider,
)

POLICY_PATH = ".asp/asp.json"
POLICY_DIR = ".asp/"
RequirementRole = Literal["required", "optional"]
DEFAULT_SOURCE = "built-in-default"
DEFAULT_REQUIREMENT = "python-check"
DEFAULT_EDIT_REQUIREMENT = "python-edit"
DEFAULT_BUDGETS_MS: dict[str, int] = {"interactive": 10000, "gate": 30000, "sweep": 300000}


class PinnedProvider(Frozen):
    id: str = Field(min_length=1)
    version: str = Field(min_length=1)
    identity: str = Field(min_length=1)
    integrity: str = Field(min_length=1)
    conformance: str = Field(min_length=1)
    package: str | None = None


class RequirementAuthority(Frozen):
    providers: list[PinnedProvider] = Field(min_length=1)


class Requirement(Frozen):
    id: str = Field(min_length=1)
    capabilities: list[CapabilityFamily] = Field(min_length=1)
    assurance: list[AssuranceMode] = Field(min_length=1)
    authority: RequirementAuthority


class CallSiteGate(Frozen):
    required_requirements: list[str]
    optional_requirements: list[str]


class Gates(Frozen):
    interactive: CallSiteGate
    gate: CallSiteGate
    sweep: CallSiteGate


class MissingHost(Frozen):
    interactive: Literal["warn-open", "fail-closed"]
    gate: Literal["fail-closed"]
    sweep: Literal["warn-open", "fail-closed"]


class PolicyBlock(Frozen):
    authority_model: Literal["explicit-pinned-provider"]
    policy_change_activation: Literal["base-policy-two-phase"]
    candidate_policy_authority: Literal["trusted-base-or-organization-floor"]
    missing_host: MissingHost


class Budgets(Frozen):
    interactive_ms: int | None = Field(default=None, ge=1)
    gate_ms: int | None = Field(default=None, ge=1)
    sweep_ms: int | None = Field(default=None, ge=1)


class AdapterPolicy(Frozen):
    enabled: bool
    mode: Literal["inspect-status-only", "full-outer-seam", "mcp-extension-candidate"] | None = None


class Adapters(Frozen):
    mcp: AdapterPolicy | None = None
    acp: AdapterPolicy | None = None


class AspConfig(Frozen):
    """The closed `asp-config` schema: no host selection, commands, scripts or launch data."""

    schema_: str | None = Field(default=None, alias="$schema")
    asp_version: str = Field(pattern=r"^asp/[0-9]+\.[0-9]+")
    requirements: list[Requirement] = Field(min_length=1)
    gates: Gates
    policy: PolicyBlock
    budgets: Budgets | None = None
    adapters: Adapters | None = None


@dataclass(frozen=True)
class EffectivePolicy:
    """The policy in force: where it came from, whether it is usable, and its digest."""

    source: str
    activation: Literal["active", "rejected"]
    document: Any
    digest: str
    config: AspConfig | None
    error: str | None = None

    def requirement(self, requirement_id: str) -> Requirement | None:
        if self.config is None:
            return None
        return next((r for r in self.config.requirements if r.id == requirement_id), None)

    def gate(self, call_site: CallSite) -> CallSiteGate | None:
        return getattr(self.config.gates, call_site) if self.config is not None else None

    def required_ids(self, call_site: CallSite) -> list[str]:
        gate = self.gate(call_site)
        return list(gate.required_requirements) if gate else []

    def optional_ids(self, call_site: CallSite) -> list[str]:
        gate = self.gate(call_site)
        if gate is None:
            return []
        required = set(gate.required_requirements)
        return [r for r in gate.optional_requirements if r not in required]

    def requirements_at(self, call_site: CallSite) -> list[tuple[RequirementRole, Requirement]]:
        """The requirements in force at *call_site* with their role, required ones first."""
        out: list[tuple[RequirementRole, Requirement]] = []
        for role, ids in (
            ("required", self.required_ids(call_site)),
            ("optional", self.optional_ids(call_site)),
        ):
            for requirement_id in ids:
                requirement = self.requirement(requirement_id)
                if requirement is not None:
                    out.append((cast(RequirementRole, role), requirement))
        return out

    def budget_ms(self, call_site: CallSite) -> int:
        """The per-call budget: policy `budgets.<callSite>Ms`, else the host default."""
        budgets = self.config.budgets if self.config is not None else None
        value = getattr(budgets, f"{call_site}_ms", None) if budgets is not None else None
        return int(value) if value else DEFAULT_BUDGETS_MS[call_site]

    def adapters(self) -> dict[str, Any] | None:
        if self.config is None or self.config.adapters is None:
            return None
        return self.config.adapters.model_dump(by_alias=True, exclude_none=True)


def _pin(provider: BuiltinProvider) -> dict[str, Any]:
    """A pin matching the built-in manifest of *provider* on every axis."""
    try:
        integrity = provider.fingerprint()
    except RuntimeError:
        integrity = "not-installed"
    return {
        "id": provider.id,
        "version": PROVIDER_VERSION,
        "identity": PUBLISHER,
        "integrity": integrity,
        "conformance": provider.capability_profiles[0]
        if provider.capability_profiles
        else "not_claimed",
    }


def default_policy_document(provider: BuiltinProvider = PYTHON_CHECK) -> dict[str, Any]:
    """The built-in default: `python-check`, required everywhere, pinned to the built-in manifest,
    and `python-edit`, the edit authority of the built-in `asp-python-edit` (in no gate: editing
    is never part of a decision, it is what `host/applyProposal` checks before writing)."""
    gate = {"requiredRequirements": [DEFAULT_REQUIREMENT], "optionalRequirements": []}
    return {
        "aspVersion": ASP_PROTOCOL_VERSION,
        "requirements": [
            {
                "id": DEFAULT_REQUIREMENT,
                "capabilities": ["check"],
                "assurance": ["advisory", "gated"],
                "authority": {"providers": [_pin(provider)]},
            },
            {
                "id": DEFAULT_EDIT_REQUIREMENT,
                "capabilities": ["edit"],
                "assurance": ["advisory", "gated"],
                "authority": {"providers": [_pin(PYTHON_EDIT)]},
            },
        ],
        "gates": {site: dict(gate) for site in CALL_SITES},
        "policy": policy_rules(),
    }


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:8]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        if item["type"] == "extra_forbidden":
            parts.append(f"{where}: key not allowed in repository policy")
        else:
            parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def parse_policy(raw: bytes | None, source: str = POLICY_PATH) -> EffectivePolicy:
    """Validate policy bytes from the baseline tree; None means no repository policy (default)."""
    if raw is None:
        document = default_policy_document()
        return EffectivePolicy(
            DEFAULT_SOURCE, "active", document, digest(document), AspConfig.model_validate(document)
        )
    try:
        document = strict_loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return EffectivePolicy(
            source,
            "rejected",
            None,
            digest_bytes(raw),
            None,
            f"not valid JSON: {str(exc)[:200] or exc.__class__.__name__}",
        )
    try:
        config = AspConfig.model_validate(document)
    except ValidationError as exc:
        return EffectivePolicy(source, "rejected", document, digest(document), None, _describe(exc))
    problems = _semantic_problems(config)
    if problems:
        return EffectivePolicy(source, "rejected", document, digest(document), None, problems)
    return EffectivePolicy(source, "active", document, digest(document), config)


def _semantic_problems(config: AspConfig) -> str | None:
    known = {r.id for r in config.requirements}
    if len(known) != len(config.requirements):
        return "requirement ids are not unique"
    for site in CALL_SITES:
        gate: CallSiteGate = getattr(config.gates, site)
        unknown = [
            r for r in [*gate.required_requirements, *gate.optional_requirements] if r not in known
        ]
        if unknown:
            return f"gates.{site} names unknown requirement(s) {', '.join(sorted(unknown))}"
    return None


def touches_policy(paths: list[str]) -> list[str]:
    """The candidate paths under `.asp/`: a change there cannot alter the gate that judges it."""
    return [p for p in paths if p == ".asp" or p.startswith(POLICY_DIR)]
