"""Trusted provider manifests, repository policies and real git workspaces for host tests.

A scenario is a frozen `HostConfig`: which fake-provider behaviours serve which requirements at
which call-sites. `prepare()` turns it into a trusted directory of `asp-server.json` manifests
(schema `server-manifest`) and a git repository whose HEAD holds `.asp/asp.json` (schema
`asp-config`) pinning exactly those manifests — unless the config asks for a mismatch.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asp_protocol.canonical import digest_bytes
from asp_protocol.policy_rules import policy_rules
from asp_protocol.vocabulary import CALL_SITES
from tests.support.definitions import assert_valid, definition_dir
from tests.support.gitrepo import make_repo

FAKE_MODULE = "reference_host.providers.fake"
FAKE_VERSION = "1.0.0"
PUBLISHER = "asp-conformance-tests"
PROFILE = "core-check-provider"
REQ = "fake-check"
DEFAULT_BUDGET_MS = 8000

DEFAULT_FILES: dict[str, str] = {
    "README.md": "# sample workspace\n",
    "src/app.py": "def add(a, b):\n    return a + b\n",
    "src/util.py": "import os\n\n\ndef home():\n    return os.environ.get('HOME')\n",
    "docs/notes.txt": "plain text, not python\n",
}


def fake_fingerprint() -> str:
    """sha256 of the fake provider's module file, found without importing the host package."""
    spec = importlib.util.find_spec("reference_host")
    assert spec is not None and spec.submodule_search_locations, "reference_host is not installed"
    module = Path(next(iter(spec.submodule_search_locations))) / "providers" / "fake.py"
    return digest_bytes(module.read_bytes()) if module.is_file() else "sha256:" + "0" * 64


@dataclass(frozen=True)
class Fake:
    """One trusted `asp-fake-provider` installation (a manifest) with a scripted behaviour."""

    behavior: str
    id: str = ""
    protocol: str | None = None
    manifest_protocols: tuple[str, ...] = ("asp/1.0",)
    hang_seconds: float | None = None
    pid_file: str | None = None
    capabilities: tuple[str, ...] = ("check",)
    write_paths: tuple[str, ...] = ()
    installed: bool = True
    bin: str | None = None
    manifest_extra: tuple[tuple[str, Any], ...] = ()
    settings: tuple[tuple[str, Any], ...] = ()  # trusted provider-settings.json, when given
    module: str = FAKE_MODULE

    @property
    def tampered(self) -> bool:
        """A deliberately bad manifest (relative bin, host-rejected fields): not schema-checked."""
        return self.bin is not None or bool(self.manifest_extra)

    @property
    def pid(self) -> str:
        return self.id or f"fake-{self.behavior}"

    def argv(self) -> list[str]:
        args = ["-m", self.module, "--behavior", self.behavior, "--id", self.pid]
        if self.protocol is not None:
            args += ["--protocol", self.protocol]
        if self.hang_seconds is not None:
            args += ["--hang-seconds", f"{self.hang_seconds:g}"]
        if self.pid_file is not None:
            args += ["--pid-file", self.pid_file]
        return args


@dataclass(frozen=True)
class Req:
    """A policy requirement served by pinned fakes; `pin` overrides pin axes (to break authority)."""

    id: str
    providers: tuple[Fake, ...]
    assurance: tuple[str, ...] = ("advisory", "gated")
    pin: tuple[tuple[str, str], ...] = ()
    capabilities: tuple[str, ...] = ("check",)


@dataclass(frozen=True)
class HostConfig:
    """Everything that decides a host's behaviour; equal configs may share one host process."""

    requirements: tuple[Req, ...] = ()
    required: tuple[tuple[str, tuple[str, ...]], ...] = ()
    optional: tuple[tuple[str, tuple[str, ...]], ...] = ()
    budgets_ms: tuple[tuple[str, int], ...] = ()
    assurance: str | None = None
    with_policy: bool = True
    extra_files: tuple[tuple[str, str], ...] = field(default=())
    # (provider id, provider-settings.json text) for providers without a Fake (e.g. built-ins)
    trusted_settings: tuple[tuple[str, str], ...] = ()
    unpinned: tuple[Fake, ...] = ()  # installed (trusted manifest) but pinned by no requirement

    def fakes(self) -> list[Fake]:
        seen: dict[str, Fake] = {fake.pid: fake for fake in self.unpinned}
        for req in self.requirements:
            for fake in req.providers:
                seen.setdefault(fake.pid, fake)
        return list(seen.values())

    def required_at(self, call_site: str) -> tuple[str, ...]:
        return dict(self.required).get(call_site, ())


def one_provider(
    behavior: str,
    *,
    call_sites: tuple[str, ...] = CALL_SITES,
    budget_ms: int | None = None,
    req_assurance: tuple[str, ...] = ("advisory", "gated"),
    pin: tuple[tuple[str, str], ...] = (),
    assurance: str | None = None,
    **fake: Any,
) -> HostConfig:
    """The common case: requirement `fake-check` served by one fake, required at *call_sites*."""
    req = Req(REQ, (Fake(behavior, **fake),), assurance=req_assurance, pin=pin)
    budgets = tuple((site, budget_ms) for site in CALL_SITES) if budget_ms else ()
    return HostConfig(
        requirements=(req,),
        required=tuple((site, (REQ,)) for site in call_sites),
        budgets_ms=budgets,
        assurance=assurance,
    )


def manifest_for(fake: Fake) -> dict[str, Any]:
    """An `asp-server.json` launching the fake with this interpreter (absolute bin, argv array)."""
    return {
        "manifestVersion": "asp-server/1.0",
        "server": {
            "id": fake.pid,
            "name": f"fake provider ({fake.behavior})",
            "version": FAKE_VERSION,
        },
        "protocolVersions": list(fake.manifest_protocols),
        "capabilities": list(fake.capabilities),
        "capabilityProfiles": [PROFILE],
        "entrypoint": {
            "transport": "stdio",
            "bin": fake.bin or sys.executable,
            "args": fake.argv(),
        },
        "artifact": {"fingerprint": fake_fingerprint()},
        "provenance": {
            "publisher": PUBLISHER,
            "source": "tests/support/host_scenarios.py",
            "license": "Apache-2.0",
        },
        "accessExpectations": {
            "filesystem": {"read": ["workspace:snapshot"], "write": list(fake.write_paths)},
            "network": {"outbound": False, "allowlist": []},
            "secrets": {"names": []},
            "environment": {"inherit": False, "variables": ["ASP_SESSION_ID", "PATH"]},
            "dataClasses": ["source-code"],
        },
        **dict(fake.manifest_extra),
    }


def pin_for(fake: Fake, overrides: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """The policy pin matching `manifest_for(fake)` on every axis, then *overrides*."""
    pin = {
        "id": fake.pid,
        "version": FAKE_VERSION,
        "identity": PUBLISHER,
        "integrity": fake_fingerprint(),
        "conformance": PROFILE,
    }
    pin.update(dict(overrides))
    return pin


def policy_for(config: HostConfig) -> dict[str, Any]:
    """The `.asp/asp.json` of *config* (always valid against `asp-config.schema.json`)."""
    required, optional = dict(config.required), dict(config.optional)
    policy: dict[str, Any] = {
        "aspVersion": "asp/1.0",
        "requirements": [
            {
                "id": req.id,
                "capabilities": list(req.capabilities),
                "assurance": list(req.assurance),
                "authority": {"providers": [pin_for(f, req.pin) for f in req.providers]},
            }
            for req in config.requirements
        ],
        "gates": {
            site: {
                "requiredRequirements": list(required.get(site, ())),
                "optionalRequirements": list(optional.get(site, ())),
            }
            for site in CALL_SITES
        },
        "policy": policy_rules(),
        "budgets": {f"{site}Ms": DEFAULT_BUDGET_MS for site in CALL_SITES},
    }
    for site, ms in config.budgets_ms:
        policy["budgets"][f"{site}Ms"] = ms
    return policy


def validate_if_possible(instance: Any, ref: str) -> None:
    """Schema-check what the harness writes when the definition bundle is present."""
    if definition_dir() is not None:
        assert_valid(instance, ref)


def prepare(root: Path, config: HostConfig) -> tuple[Path, Path, dict[str, Any] | None]:
    """Create `<root>/trusted` (manifests) and `<root>/repo` (git, policy committed at HEAD)."""
    trusted = root / "trusted"
    trusted.mkdir(parents=True)
    for fake in config.fakes():
        if not fake.installed:
            continue
        manifest = manifest_for(fake)
        if not fake.tampered:
            validate_if_possible(manifest, "server-manifest.schema.json")
        (trusted / fake.pid).mkdir()
        (trusted / fake.pid / "asp-server.json").write_text(json.dumps(manifest, indent=2))
        if fake.settings:
            settings = json.dumps(dict(fake.settings), indent=2)
            (trusted / fake.pid / "provider-settings.json").write_text(settings)
    for provider_id, text in config.trusted_settings:
        (trusted / provider_id).mkdir(exist_ok=True)
        (trusted / provider_id / "provider-settings.json").write_text(text)
    files: dict[str, str | bytes] = {**DEFAULT_FILES, **dict(config.extra_files)}
    policy = policy_for(config) if config.with_policy else None
    if policy is not None:
        validate_if_possible(policy, "asp-config.schema.json")
        files[".asp/asp.json"] = json.dumps(policy, indent=2) + "\n"
    repo = make_repo(root / "repo", files)
    return repo, trusted, policy
