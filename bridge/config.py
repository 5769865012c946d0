"""Bridge settings: defaults ← `--config FILE` (JSON) ← `ASP_BRIDGE_*` environment ← command-line flags.

Unknown keys are an error that names the key, in every source. The host command comes only from
here — never from a tool argument.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bridge.fence import TextLimits
from host_client import HostClientSettings

ENV_PREFIX = "ASP_BRIDGE_"
REPO_PLACEHOLDER = "{repo}"


class ConfigError(Exception):
    """A configuration source is unreadable or holds an unknown or invalid key."""


class BridgeSettings(BaseModel):
    """Everything the bridge is configured with (keys as in `config/bridge.json`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    repo: Path | None = Field(
        default=None, description="The workspace; the host runs with it as cwd."
    )
    host: list[str] | str | None = Field(
        default=None,
        description="Host command (argv list, or one string split like a shell). None = reference host.",
    )
    timeout: float = Field(
        default=50.0,
        gt=0,
        description="Deadline of one tool call in seconds (all its host calls together); below "
        "the ~60 s after which Claude Code and the TypeScript SDK give up on a call.",
    )
    transport: Literal["stdio", "streamable-http"] = "stdio"
    http_host: str = "127.0.0.1"
    http_token: str | None = Field(
        default=None,
        min_length=16,
        description="Bearer token every HTTP request must carry; required off loopback.",
    )
    http_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Extra Host names the HTTP bridge is reached by (beside bind and loopback).",
    )
    port: int = Field(default=8000, ge=1, le=65535)
    max_failed_starts: int = Field(default=5, ge=1)
    backoff_initial: float = Field(default=0.25, gt=0)
    backoff_max: float = Field(default=10.0, gt=0)
    stderr_buffer_bytes: int = Field(default=64 * 1024, ge=1024)
    trace_size: int = Field(default=200, ge=1, le=100_000)
    text_string_chars: int = Field(default=2000, ge=80)
    text_total_chars: int = Field(default=20000, ge=500)
    max_result_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    structured_max_chars: int = Field(
        default=100_000,
        ge=10_000,
        le=500_000,
        description="Largest structuredContent of one tool result, serialized (what Claude Code "
        "gives the model); larger answers are paged (asp_inspect) or cut with an `elided` record.",
    )
    inspect_page_chars: int = Field(
        default=20000,
        ge=2000,
        le=1_000_000,
        description="Largest text content of one asp_inspect page; longer answers are paginated.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    tools: list[str] | None = Field(
        default=None,
        description="Allow-list of tool names to expose (None = all); the others are neither "
        "listed nor callable. In ASP_BRIDGE_TOOLS, names separated by commas or spaces.",
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("tools", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [name for name in value.replace(",", " ").split() if name]
        return value

    # -- derived ------------------------------------------------------------------------------

    def workspace(self) -> Path:
        return (self.repo or Path.cwd()).resolve()

    def host_argv(self) -> tuple[str, ...]:
        return resolve_host_argv(self.host, self.workspace())

    def host_client_settings(self) -> HostClientSettings:
        return HostClientSettings(
            argv=self.host_argv(),
            cwd=self.workspace(),
            timeout=self.timeout,
            max_failed_starts=self.max_failed_starts,
            backoff_initial=self.backoff_initial,
            backoff_max=self.backoff_max,
            stderr_buffer_bytes=self.stderr_buffer_bytes,
            trace_size=self.trace_size,
        )

    def text_limits(self) -> TextLimits:
        return TextLimits(
            string_chars=self.text_string_chars,
            total_chars=self.text_total_chars,
            max_result_bytes=self.max_result_bytes,
            structured_chars=self.structured_max_chars,
        )


def default_host_argv() -> list[str]:
    """The reference host of this same installation."""
    return [sys.executable, "-m", "reference_host", "serve", "--repo", REPO_PLACEHOLDER]


def resolve_host_argv(host: list[str] | str | None, workspace: Path) -> tuple[str, ...]:
    """Split a string like a shell, put the absolute workspace in for `{repo}`, else append `serve --repo`."""
    if host is None:
        argv = default_host_argv()
    elif isinstance(host, str):
        argv = shlex.split(host)
    else:
        argv = list(host)
    if not argv:
        raise ConfigError("host: the host command is empty")
    repo = str(workspace)
    if any(REPO_PLACEHOLDER in arg for arg in argv):
        return tuple(arg.replace(REPO_PLACEHOLDER, repo) for arg in argv)
    return (*argv, "serve", "--repo", repo)


def _fields() -> set[str]:
    return set(BridgeSettings.model_fields)


def _check_keys(values: Mapping[str, Any], source: str) -> None:
    unknown = sorted(set(values) - _fields())
    if unknown:
        raise ConfigError(
            f"{source}: unknown configuration key {unknown[0]!r}"
            + (
                f" (and {len(unknown) - 1} more: {', '.join(unknown[1:])})"
                if len(unknown) > 1
                else ""
            )
        )


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config file must hold a JSON object")
    data.pop("$comment", None)
    _check_keys(data, str(path))
    return data


def read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """`ASP_BRIDGE_TIMEOUT=5` → `{"timeout": "5"}`; pydantic converts the type."""
    values: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in _fields():
            raise ConfigError(f"environment: unknown configuration variable {name!r}")
        values[key] = raw
    return values


def load_settings(
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> BridgeSettings:
    """Merge the sources in precedence order and validate; raises ConfigError naming the bad key."""
    merged: dict[str, Any] = {}
    if config_file is not None:
        merged.update(read_config_file(config_file))
    merged.update(read_env(os.environ if environ is None else environ))
    if overrides:
        _check_keys(overrides, "flags")
        merged.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return BridgeSettings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise ConfigError(f"configuration key {where!r}: {first['msg']}") from None
