"""Declarative bake-off case specs, and the builders for the policy and manifests a case declares.

A case says what the workspace holds, which fake providers exist (trusted manifests), what the
repository policy requires, what request is sent, and which properties the comparison judges.
Nothing here runs anything; `workspace.py` materialises a case and the runners execute it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from asp_protocol.grants import snapshot_only_access
from asp_protocol.policy_rules import policy_rules
from asp_protocol.vocabulary import CALL_SITES, CallSite

ChangesetMode = Literal["working", "stale"]
Action = Literal["call", "cancel", "fast-path", "edit-plan", "apply"]

FAKE_PROVIDER_MODULE = "reference_host.providers.fake"
EDIT_PROVIDER_MODULE = "reference_host.providers.python_edit"
BAKEOFF_PUBLISHER = "asp-mcp-bridge-bakeoff"
BAKEOFF_CONFORMANCE = "core-check-provider"

# The properties of a host result both bindings must carry over unchanged.
RESULT_PROPERTIES: tuple[str, ...] = (
    "decision",
    "call-site",
    "request-identity",
    "freshness",
    "coverage",
    "authority",
    "assurance",
    "receipt-kind",
)
# The properties ADR 0025 asks the extension to preserve, plus the two the bridge guarantees itself.
PROPERTIES: tuple[str, ...] = (
    *RESULT_PROPERTIES,
    "cancellation",
    "fast-path-blocked",
    "gate-unsatisfiable",
    "mediated-apply",
    "apply-refused",
)

# Properties whose failure makes the bake-off exit non-zero. `mediated-apply` is absent on purpose:
# the extension refuses apply by design, so it is reported (never "passed"), not required.
MUST_HOLD: frozenset[str] = frozenset(PROPERTIES) - {"mediated-apply"}

DEFAULT_FILES: Mapping[str, str] = {
    "README.md": "bake-off workspace\n",
    "src/app.py": 'def greet(name):\n    return "hello " + name\n',
    "src/util.py": "def add(a, b):\n    return a + b\n",
}
DEFAULT_CHANGE: Mapping[str, str | None] = {
    "src/app.py": 'def greet(name):\n    return "hello, " + name\n',
}


@dataclass(frozen=True)
class ProviderSpec:
    """A fake provider installed in the case's trusted directory (`DIR/<id>/asp-server.json`)."""

    id: str
    behavior: str
    version: str = "1.0.0"
    extra_args: tuple[str, ...] = ()
    protocol_versions: tuple[str, ...] = ("asp/1.0",)
    module: str = FAKE_PROVIDER_MODULE  # e.g. EDIT_PROVIDER_MODULE, launched without --behavior
    capabilities: tuple[str, ...] = ("check",)

    @property
    def fingerprint(self) -> str:
        """A stable artifact fingerprint for this fake; the policy pins exactly this value."""
        seed = f"{self.module}:{self.id}:{self.behavior}".encode()
        return "sha256:" + hashlib.sha256(seed).hexdigest()


@dataclass(frozen=True)
class RequirementSpec:
    """One policy requirement served by the provider *provider*, pinned as the fields say."""

    id: str
    provider: str
    assurance: tuple[str, ...] = ("advisory", "gated")
    pin_version: str | None = None  # None: pin the manifest's version (authority granted)
    call_sites: tuple[CallSite, ...] = CALL_SITES  # () for an edit requirement: in no gate
    capabilities: tuple[str, ...] = ("check",)


@dataclass(frozen=True)
class RequestSpec:
    """What the client sends: an outer method with its call-site, and how the case drives it."""

    method: str
    call_site: CallSite
    action: Action = "call"
    changeset: ChangesetMode = "working"
    cancel_after_s: float = 0.5
    warm: bool = True  # send the request again on the warm host to measure binding latency
    extra_params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Expectation:
    """What the native host should answer, so the report can say whether the scenario was exercised."""

    decision: str | None = None
    degraded: tuple[str, ...] = ()
    error_code: int | None = None


@dataclass(frozen=True)
class Case:
    """One ADR 0025 case: workspace, providers, policy, request and judged properties."""

    name: str
    title: str
    request: RequestSpec
    properties: tuple[str, ...]
    providers: tuple[ProviderSpec, ...] = ()
    requirements: tuple[RequirementSpec, ...] = ()
    budgets: Mapping[str, int] = field(default_factory=dict)
    host_args: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_FILES))
    change: Mapping[str, str | None] = field(default_factory=lambda: dict(DEFAULT_CHANGE))
    expect: Expectation = field(default_factory=Expectation)
    needs: tuple[str, ...] = ()  # host capability families the case needs, e.g. ("edit",)


def build_policy(case: Case) -> dict[str, Any] | None:
    """The case's `.asp/asp.json` (schema asp-config), or None to use the host's built-in default."""
    if not case.requirements:
        return None
    manifests = {p.id: p for p in case.providers}
    requirements = []
    for req in case.requirements:
        provider = manifests.get(req.provider)
        version = req.pin_version or (provider.version if provider else "1.0.0")
        fingerprint = (
            provider.fingerprint if provider else ProviderSpec(req.provider, "absent").fingerprint
        )
        requirements.append(
            {
                "id": req.id,
                "capabilities": list(req.capabilities),
                "assurance": list(req.assurance),
                "authority": {
                    "providers": [
                        {
                            "id": req.provider,
                            "version": version,
                            "identity": BAKEOFF_PUBLISHER,
                            "integrity": fingerprint,
                            "conformance": BAKEOFF_CONFORMANCE,
                        }
                    ]
                },
            }
        )
    gates = {
        site: {
            "requiredRequirements": [r.id for r in case.requirements if site in r.call_sites],
            "optionalRequirements": [],
        }
        for site in CALL_SITES
    }
    policy: dict[str, Any] = {
        "aspVersion": "asp/1.0",
        "requirements": requirements,
        "gates": gates,
        "policy": policy_rules(),
        "adapters": {"mcp": {"enabled": True, "mode": "mcp-extension-candidate"}},
    }
    if case.budgets:
        policy["budgets"] = dict(case.budgets)
    return policy


def build_manifest(provider: ProviderSpec, python: str) -> dict[str, Any]:
    """A trusted `asp-server.json` (schema server-manifest) launching the fake provider by command."""
    return {
        "manifestVersion": "asp-server/1.0",
        "server": {
            "id": provider.id,
            "name": f"bake-off fake provider ({provider.behavior})",
            "version": provider.version,
        },
        "protocolVersions": list(provider.protocol_versions),
        "capabilities": list(provider.capabilities),
        "capabilityProfiles": [BAKEOFF_CONFORMANCE],
        "entrypoint": {
            "transport": "stdio",
            "bin": python,
            "args": (
                ["-m", provider.module, "--behavior", provider.behavior, "--id", provider.id]
                if provider.module == FAKE_PROVIDER_MODULE
                else ["-m", provider.module]
            )
            + list(provider.extra_args),
        },
        "artifact": {"fingerprint": provider.fingerprint},
        "provenance": {
            "publisher": BAKEOFF_PUBLISHER,
            "source": "https://example.invalid/asp-mcp-bridge/bakeoff",
            "license": "Apache-2.0",
        },
        "accessExpectations": snapshot_only_access(["ASP_SESSION_ID"], ["source-code"]),
    }
