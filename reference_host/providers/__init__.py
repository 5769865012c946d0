"""Built-in provider processes shipped with the reference host, and the facts host and provider share."""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import asp_protocol

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
    user_cache: bool = False  # keeps a persistent cache in the user's cache dir (`--cache-dir`)

    @property
    def module_file(self) -> Path:
        spec = importlib.util.find_spec(self.module)
        if spec is None or spec.origin is None:
            raise RuntimeError(f"built-in provider module {self.module} is not installed")
        return Path(spec.origin)

    def fingerprint(self) -> str:
        """Content hash of the provider's build: its entry module plus every module it can load."""
        return _build_fingerprint()


@cache
def _build_fingerprint() -> str:
    """sha256 over the providers package and the wire layer, so editing any of them changes it."""
    roots = (Path(__file__).parent, Path(asp_protocol.__file__).parent)
    hasher = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            hasher.update(f"{root.name}/{path.relative_to(root).as_posix()}\0".encode())
            hasher.update(path.read_bytes())
            hasher.update(b"\0")
    return "sha256:" + hasher.hexdigest()


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
    user_cache=True,
)
PYTHON_EDIT = BuiltinProvider(
    id="asp-python-edit",
    module="reference_host.providers.python_edit",
    capability="edit",
    user_cache=True,
)
BUILTIN_PROVIDERS: tuple[BuiltinProvider, ...] = (PYTHON_CHECK, PYTHON_INSPECT, PYTHON_EDIT)
