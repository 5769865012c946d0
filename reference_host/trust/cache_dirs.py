"""Where a built-in provider may keep a persistent cache: the user's cache directory, never the workspace.

The host chooses the directory from its own launch environment (a provider gets neither `HOME` nor
`XDG_CACHE_HOME`): `$ASP_HOST_CACHE_DIR` if set (`off` turns caches off), else
`$XDG_CACHE_HOME/asp-bridge`, else `~/.cache/asp-bridge`; one subdirectory per provider id. A
directory that resolves inside the workspace is never offered, so the workspace stays byte-identical.
The manifest declares it as a `user-cache:` write (see `is_private_cache`), which is not a
direct-write risk: it is outside every workspace and holds nothing but the provider's own cache.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "ASP_HOST_CACHE_DIR"
USER_CACHE = "user-cache:"


def cache_root() -> Path | None:
    """The host's cache root, or None when caching is off or no absolute place is known."""
    override = os.environ.get(CACHE_ENV)
    if override is not None:
        if override.strip().lower() in ("", "off", "0", "none"):
            return None
        root = Path(override).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        try:
            base = Path(xdg) if xdg else Path.home() / ".cache"
        except RuntimeError:  # no home directory known
            return None
        root = base / "asp-bridge"
    return root if root.is_absolute() else None


def provider_cache_dir(provider_id: str, workspace: Path | None) -> Path | None:
    """The cache directory offered to *provider_id*, or None (off, or inside the workspace)."""
    root = cache_root()
    if root is None:
        return None
    directory = root / provider_id
    if workspace is not None:
        resolved, inside = directory.resolve(), workspace.resolve()
        if resolved == inside or inside in resolved.parents:
            return None
    return directory


def is_private_cache(entry: str) -> bool:
    """A `filesystem.write` declaration of a provider's own cache outside the workspace."""
    return entry.startswith(USER_CACHE)
