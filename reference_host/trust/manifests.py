"""Provider manifests from the trusted environment only, and the pin check that grants authority.

Launch data comes from `DIR/<provider-id>/asp-server.json` in the trusted dir or from the built-in
manifests of the providers this package ships (docs/architecture.md#policy-and-authority). A manifest is metadata: it never grants
authority by itself; only a policy pin matching it on every axis does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from asp_protocol import ASP_LEGACY_PROTOCOL_VERSION, ASP_PROTOCOL_VERSION
from asp_protocol.grants import snapshot_only_access
from asp_protocol.vocabulary import CapabilityFamily, LegacyRole
from asp_protocol.wire import Frozen
from reference_host.coverage import validation_summary
from reference_host.providers import (
    BUILTIN_PROVIDERS,
    LICENSE,
    PROVIDER_VERSION,
    PUBLISHER,
    SOURCE,
    BuiltinProvider,
)
from reference_host.trust.cache_dirs import USER_CACHE, is_private_cache, provider_cache_dir
from reference_host.trust.policy import PinnedProvider
from reference_host.trust.settings import (
    SETTINGS_NAME,
    ProviderSettings,
    SettingsError,
    load_settings,
)

log = logging.getLogger(__name__)

MANIFEST_NAME = "asp-server.json"
NOT_CLAIMED = "not_claimed"
# Fields a host must refuse even if a future schema let them through (docs/architecture.md#protocol-map).
HOST_REJECTED_FIELDS = frozenset(
    {
        "trusted",
        "authority",
        "gateAuthority",
        "trustRoot",
        "registry",
        "registryMembership",
        "certification",
        "certified",
        "firstPartyAuthority",
    }
)
ManifestState = Literal[
    "valid", "present", "missing", "malformed", "stale", "incompatible", "untrusted"
]


class ServerInfo(Frozen):
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    version: str = Field(min_length=1)


class Entrypoint(Frozen):
    transport: Literal["stdio"]
    bin: str = Field(min_length=1)
    args: list[str]


class Checksum(Frozen):
    path: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[a-fA-F0-9]{64}$")


class Artifact(Frozen):
    fingerprint: str = Field(min_length=1)
    checksums: list[Checksum] | None = None


class Provenance(Frozen):
    publisher: str = Field(min_length=1)
    source: str = Field(min_length=1)
    license: str = Field(min_length=1)
    signature: str | None = None


class FilesystemAccess(Frozen):
    read: list[str]
    write: list[str]


class NetworkAccess(Frozen):
    outbound: bool
    allowlist: list[str]


class SecretsAccess(Frozen):
    names: list[str]


class EnvironmentAccess(Frozen):
    inherit: Literal[False]
    variables: list[str]


class AccessExpectations(Frozen):
    filesystem: FilesystemAccess
    network: NetworkAccess
    secrets: SecretsAccess
    environment: EnvironmentAccess
    data_classes: list[str]


class ServerManifest(Frozen):
    """The closed `server-manifest` schema (`asp-server/1.0`)."""

    schema_: str | None = Field(default=None, alias="$schema")
    manifest_version: Literal["asp-server/1.0"]
    server: ServerInfo
    protocol_versions: list[str] = Field(min_length=1)
    roles: list[LegacyRole] | None = None
    capabilities: list[CapabilityFamily]
    capability_profiles: list[str] | None = None
    entrypoint: Entrypoint
    artifact: Artifact
    provenance: Provenance
    access_expectations: AccessExpectations


@dataclass
class InstalledProvider:
    """One provider the trusted environment knows: its manifest (if usable) and why not otherwise."""

    id: str
    path: str
    state: ManifestState
    manifest: ServerManifest | None = None
    cwd: Path | None = None
    builtin: bool = False
    detail: str = ""
    checksums_ok: bool = True
    checksum_detail: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    settings: ProviderSettings | None = None

    @property
    def launchable(self) -> bool:
        return self.state == "valid" and self.manifest is not None

    @property
    def protocol_version(self) -> str | None:
        """The version the host offers: `asp/1.0`, else `asp/0.1` if listed; None means skewed."""
        if self.manifest is None:
            return None
        versions = self.manifest.protocol_versions
        if ASP_PROTOCOL_VERSION in versions:
            return ASP_PROTOCOL_VERSION
        return ASP_LEGACY_PROTOCOL_VERSION if ASP_LEGACY_PROTOCOL_VERSION in versions else None

    @property
    def declares_write(self) -> bool:
        """Declares writing anything but its own cache outside the workspace (cache_dirs.py)."""
        if self.manifest is None:
            return False
        return any(
            not is_private_cache(w) for w in self.manifest.access_expectations.filesystem.write
        )

    @property
    def conformance_claims(self) -> list[str]:
        return list(self.manifest.capability_profiles or []) if self.manifest else []

    def argv(self) -> list[str]:
        assert self.manifest is not None
        return [self.manifest.entrypoint.bin, *self.manifest.entrypoint.args]


def _verify_checksums(manifest: ServerManifest, base: Path) -> tuple[bool, str]:
    for item in manifest.artifact.checksums or []:
        target = Path(item.path)
        target = target if target.is_absolute() else base / target
        try:
            actual = hashlib.sha256(target.read_bytes()).hexdigest()
        except OSError:
            return False, f"checksum file {item.path} is missing"
        if actual != item.sha256.lower():
            return False, f"checksum of {item.path} does not match the manifest"
    return True, "artifact checksums verified" if manifest.artifact.checksums else ""


def load_manifest(path: Path) -> InstalledProvider:
    """Parse and vet one trusted manifest; problems leave it visible but not launchable."""
    provider_id = path.parent.name
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return InstalledProvider(
            provider_id, str(path), "malformed", detail=f"unreadable: {exc.__class__.__name__}"
        )
    if not isinstance(raw, dict):
        return InstalledProvider(
            provider_id, str(path), "malformed", detail="manifest is not an object"
        )
    rejected = sorted(HOST_REJECTED_FIELDS & set(raw))
    if rejected:
        return InstalledProvider(
            provider_id,
            str(path),
            "untrusted",
            raw=raw,
            detail=f"host-rejected fields: {', '.join(rejected)}",
        )
    try:
        manifest = ServerManifest.model_validate(raw)
    except ValidationError as exc:
        return InstalledProvider(
            provider_id, str(path), "malformed", raw=raw, detail=validation_summary(exc)
        )
    found = InstalledProvider(
        manifest.server.id, str(path), "valid", manifest, cwd=path.parent, raw=raw
    )
    if manifest.server.id != provider_id:
        found.state = "incompatible"
        found.detail = f"manifest server.id {manifest.server.id!r} does not match its directory {provider_id!r}"
    elif not Path(manifest.entrypoint.bin).is_absolute():
        found.state = "untrusted"
        found.detail = "entrypoint.bin must be an absolute path (no PATH lookup)"
    found.checksums_ok, found.checksum_detail = _verify_checksums(manifest, path.parent)
    return found


def builtin_manifest(
    provider: BuiltinProvider, workspace: Path | None = None
) -> InstalledProvider | None:
    """The manifest of a shipped provider, launched with this interpreter; None when not installed.
    A provider that keeps a persistent cache is given its directory (outside *workspace*)."""
    try:
        if importlib.util.find_spec(provider.module) is None:
            return None
        fingerprint = provider.fingerprint()
        module_dir = provider.module_file.parent
    except (ImportError, RuntimeError, ValueError):
        return None
    cache = provider_cache_dir(provider.id, workspace) if provider.user_cache else None
    cache_args = ["--cache-dir", str(cache)] if cache is not None else []
    cache_write = [f"{USER_CACHE}{cache}"] if cache is not None else []
    raw = {
        "manifestVersion": "asp-server/1.0",
        "server": {"id": provider.id, "name": provider.id, "version": PROVIDER_VERSION},
        "protocolVersions": [ASP_PROTOCOL_VERSION],
        "capabilities": [provider.capability],
        "capabilityProfiles": list(provider.capability_profiles),
        "entrypoint": {
            "transport": "stdio",
            "bin": sys.executable,
            "args": ["-m", provider.module, *cache_args],
        },
        "artifact": {"fingerprint": fingerprint},
        "provenance": {"publisher": PUBLISHER, "source": SOURCE, "license": LICENSE},
        "accessExpectations": snapshot_only_access(
            ["ASP_SESSION_ID", "PATH"], ["source-code", "diff-metadata"], write=cache_write
        ),
    }
    manifest = ServerManifest.model_validate(raw)
    return InstalledProvider(
        provider.id,
        f"builtin:{provider.module}",
        "valid",
        manifest,
        cwd=module_dir,
        builtin=True,
        raw=raw,
    )


def discover(
    trusted_dir: Path | None, workspace: Path | None = None
) -> dict[str, InstalledProvider]:
    """Built-in manifests, then the trusted dir's (which win for the same id)."""
    found: dict[str, InstalledProvider] = {}
    for provider in BUILTIN_PROVIDERS:
        installed = builtin_manifest(provider, workspace)
        if installed is not None:
            found[provider.id] = installed
    if trusted_dir is not None and trusted_dir.is_dir():
        for path in sorted(trusted_dir.glob(f"*/{MANIFEST_NAME}")):
            installed = load_manifest(path)
            if installed.id in found and found[installed.id].builtin:
                log.info("trusted manifest %s overrides the built-in %s", path, installed.id)
            found[installed.id] = installed
    elif trusted_dir is not None:
        log.warning("trusted dir %s does not exist", trusted_dir)
    if trusted_dir is not None and trusted_dir.is_dir():
        for installed in found.values():
            _attach_settings(installed, trusted_dir / installed.id)
    return found


def _attach_settings(installed: InstalledProvider, directory: Path) -> None:
    """Settings beside the manifest (built-ins too); bad settings make the provider unlaunchable."""
    try:
        installed.settings = load_settings(directory, installed.protocol_version)
    except SettingsError as exc:
        installed.state = "malformed"
        installed.detail = f"{SETTINGS_NAME}: {exc}"[:500]


@dataclass(frozen=True)
class PinCheck:
    """The outcome of matching one policy pin against the trusted manifest, axis by axis."""

    granted: bool
    identity: str
    integrity: str
    conformance: str
    mismatches: tuple[str, ...]

    @property
    def mismatch_detail(self) -> str:
        """Why a pin that is not granted gives no authority (the `missing-authority` detail)."""
        return "policy pin does not match the trusted manifest: " + "; ".join(self.mismatches)


def check_pin(pin: PinnedProvider, installed: InstalledProvider | None) -> PinCheck:
    """Authority only when id, version, identity, integrity and conformance all match (docs/architecture.md#policy-and-authority)."""
    if installed is None or installed.manifest is None:
        return PinCheck(False, pin.identity, "no trusted manifest", NOT_CLAIMED, ("manifest",))
    manifest = installed.manifest
    claims = installed.conformance_claims
    mismatches = []
    if manifest.server.id != pin.id:
        mismatches.append("id")
    if manifest.server.version != pin.version:
        mismatches.append(f"version (pinned {pin.version}, installed {manifest.server.version})")
    if manifest.provenance.publisher != pin.identity:
        mismatches.append(
            f"identity (pinned {pin.identity}, installed {manifest.provenance.publisher})"
        )
    if manifest.artifact.fingerprint != pin.integrity:
        mismatches.append(
            "integrity (pinned digest differs from the installed artifact fingerprint)"
        )
    if not (pin.conformance in claims or (pin.conformance == NOT_CLAIMED and not claims)):
        mismatches.append(
            f"conformance (pinned {pin.conformance}, claimed {claims or NOT_CLAIMED})"
        )
    if not installed.checksums_ok:
        mismatches.append(f"checksums ({installed.checksum_detail})")
    conformance = (
        pin.conformance
        if "conformance" not in " ".join(mismatches)
        else (claims[0] if claims else NOT_CLAIMED)
    )
    return PinCheck(
        not mismatches,
        manifest.provenance.publisher,
        manifest.artifact.fingerprint,
        conformance,
        tuple(mismatches),
    )
