"""Read-grant path globs (docs/architecture.md#protocol-map), one matcher for the host that enforces and the provider that obeys.

`**` spans directories, `*`/`?` stay in one segment, `!` excludes. Also the access expectations a
manifest states for a provider that reads only the snapshot the host grants.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile one grant glob; `src/**` matches everything below `src`, `**/*.py` matches `a.py`."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


@lru_cache(maxsize=256)
def _union(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern matching what any of *globs* matches (None for none): a path is tried in one
    regex call, not one per glob. Each alternative keeps its own end anchor."""
    if not globs:
        return None
    return re.compile("|".join(f"(?:{glob_regex(g).pattern})" for g in globs), re.DOTALL)


class ReadGrant:
    """The granted read scope: a path is readable when an include glob matches and no `!` glob does."""

    def __init__(self, globs: Iterable[str]) -> None:
        patterns = tuple(g for g in globs if isinstance(g, str))
        self.globs = patterns
        self._include = _union(tuple(g for g in patterns if not g.startswith("!")))
        self._exclude = _union(tuple(g[1:] for g in patterns if g.startswith("!")))

    def allows(self, path: str) -> bool:
        path = path.lstrip("/")
        if self._include is None or self._include.match(path) is None:
            return False
        return self._exclude is None or self._exclude.match(path) is None


def snapshot_only_access(
    variables: list[str], data_classes: list[str], *, write: list[str] | None = None
) -> dict[str, Any]:
    """A manifest's `accessExpectations` for a provider that reads the workspace only through the
    host's snapshot: no network, no secrets, only the named environment variables, and no writes
    but *write* (places outside the repository, such as its own cache)."""
    return {
        "filesystem": {"read": ["workspace:snapshot"], "write": list(write or [])},
        "network": {"outbound": False, "allowlist": []},
        "secrets": {"names": []},
        "environment": {"inherit": False, "variables": variables},
        "dataClasses": data_classes,
    }
