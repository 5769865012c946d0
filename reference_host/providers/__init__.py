"""Built-in provider processes shipped with the reference host, and the facts host and provider share."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from asp_protocol.canonical import digest_bytes

PUBLISHER = "asp-mcp-bridge"
SOURCE = "https://example.invalid/asp-mcp-bridge"
LICENSE = "Apache-2.0"
PROVIDER_VERSION = "0.1.0"


@dataclass(frozen=True)
class BuiltinProvider:
    """A provider the package ships: launched as `python -m <module>` from a built-in manifest."""

    id: str
    module: str
    capability: str
    diagnostic_sources: tuple[str, ...] = ()
    capability_profiles: tuple[str, ...] = ()

    @property
    def module_file(self) -> Path:
        spec = importlib.util.find_spec(self.module)
        if spec is None or spec.origin is None:
            raise RuntimeError(f"built-in provider module {self.module} is not installed")
        return Path(spec.origin)

    def fingerprint(self) -> str:
        """Content hash of the provider's code: changes whenever the provider is rebuilt."""
        return digest_bytes(self.module_file.read_bytes())


PYTHON_CHECK = BuiltinProvider(
    id="asp-python-check",
    module="reference_host.providers.python_check",
    capability="check",
    diagnostic_sources=("python",),
    capability_profiles=("core-check-provider",),
)
PYTHON_INSPECT = BuiltinProvider(
    id="asp-python-inspect",
    module="reference_host.providers.python_inspect",
    capability="inspect",
)
BUILTIN_PROVIDERS: tuple[BuiltinProvider, ...] = (PYTHON_CHECK, PYTHON_INSPECT)
