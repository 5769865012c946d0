"""Read grants: the narrowed glob set a provider may read, and the matcher the callbacks enforce."""

from __future__ import annotations

import re
from functools import lru_cache

# Always excluded from a grant, whatever the provider asked for.
HOST_EXCLUDES: tuple[str, ...] = ("!.git/**", "!**/.env", "!**/.env.*")
DEFAULT_READ: tuple[str, ...] = ("**/*",)


@lru_cache(maxsize=512)
def glob_regex(glob: str) -> re.Pattern[str]:
    """`**` spans directories, `*` and `?` stay within one path segment."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def narrow_read(requested: list[str] | None) -> list[str]:
    """The granted read globs: what was asked (or everything), minus the host's exclusions."""
    wanted = [g for g in requested or DEFAULT_READ if isinstance(g, str) and g and ":" not in g]
    return [*(wanted or DEFAULT_READ), *HOST_EXCLUDES]


def in_grant(path: str, grant: list[str]) -> bool:
    """True when *path* matches a positive glob and no `!` exclusion."""
    allowed = False
    for glob in grant:
        if glob.startswith("!"):
            if glob_regex(glob[1:]).match(path):
                return False
        elif not allowed and glob_regex(glob).match(path):
            allowed = True
    return allowed
