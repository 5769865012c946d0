"""Trusted provider settings: `DIR/<provider-id>/provider-settings.json` beside the trusted manifest.

The repository policy and the manifest are closed documents, so what a provider should run lives
in a third trusted file the repository cannot touch (docs/asp-0.1.md). It is validated strictly:
the only keys are `configuration` (an object, sent to an `asp/1.0` provider as `check/evaluate`
`configuration` and used for the expected `configDigest`) and `checks` (unique check ids, sent to
an `asp/0.1` provider as its top-level `checks` selection). An unknown key, a wrong type or a key
that does not fit the provider's negotiated protocol is an error naming the key, and a provider
with bad settings is not launched (fail closed, visible in status).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asp_protocol import ASP_LEGACY_PROTOCOL_VERSION
from asp_protocol.canonical import digest

SETTINGS_NAME = "provider-settings.json"
SETTINGS_KEYS = ("configuration", "checks")
MAX_CHECKS = 200


class SettingsError(ValueError):
    """The settings file exists but cannot be used; the message names the offending key."""


@dataclass(frozen=True)
class ProviderSettings:
    """Settings in force for one provider, with the digest that binds them into receipts."""

    path: str
    configuration: dict[str, Any] | None = None
    checks: tuple[str, ...] | None = None

    @property
    def document(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.configuration is not None:
            out["configuration"] = self.configuration
        if self.checks is not None:
            out["checks"] = list(self.checks)
        return out

    @property
    def digest(self) -> str:
        return digest(self.document)

    def summary(self) -> str:
        """One line for status details and receipts: digest plus what is selected."""
        parts = [f"settings {self.digest}"]
        if self.checks is not None:
            parts.append("checks " + ", ".join(self.checks)[:400])
        if self.configuration is not None:
            parts.append("configuration keys " + ", ".join(sorted(self.configuration))[:200])
        return "; ".join(parts)


def _checks(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise SettingsError("checks: expected a non-empty array of check ids")
    if len(value) > MAX_CHECKS:
        raise SettingsError(f"checks: at most {MAX_CHECKS} entries")
    if not all(isinstance(item, str) and item.strip() and len(item) <= 200 for item in value):
        raise SettingsError("checks: every entry must be a non-empty string of at most 200 chars")
    if len(set(value)) != len(value):
        raise SettingsError("checks: entries must be unique")
    return tuple(value)


def parse_settings(raw: Any, path: str, protocol_version: str | None) -> ProviderSettings:
    """Validate one settings document for a provider negotiating *protocol_version*."""
    if not isinstance(raw, dict):
        raise SettingsError("settings must be a JSON object")
    unknown = sorted(set(raw) - set(SETTINGS_KEYS))
    if unknown:
        raise SettingsError(
            f"unknown key {unknown[0]!r} (allowed: {', '.join(SETTINGS_KEYS)})"[:300]
        )
    legacy = protocol_version == ASP_LEGACY_PROTOCOL_VERSION
    configuration = raw.get("configuration")
    if "configuration" in raw:
        if not isinstance(configuration, dict):
            raise SettingsError("configuration: expected an object")
        if legacy:
            raise SettingsError(
                "configuration: an asp/0.1 provider ignores configuration; use checks"
            )
    checks = None
    if "checks" in raw:
        checks = _checks(raw["checks"])
        if not legacy:
            raise SettingsError(
                "checks: only asp/0.1 providers take a top-level checks selection; "
                "use configuration"
            )
    return ProviderSettings(path, configuration, checks)


def load_settings(directory: Path, protocol_version: str | None) -> ProviderSettings | None:
    """The settings beside a trusted manifest; None when there is no file; raises SettingsError."""
    path = directory / SETTINGS_NAME
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SettingsError(f"unreadable: {exc.__class__.__name__}") from exc
    return parse_settings(raw, str(path), protocol_version)
