"""Read grants: the narrowed glob set a provider may read, and the matcher the callbacks enforce."""

from __future__ import annotations

from asp_protocol.grants import ReadGrant

# Always excluded from a grant, whatever the provider asked for.
HOST_EXCLUDES: tuple[str, ...] = ("!.git/**", "!**/.env", "!**/.env.*")
DEFAULT_READ: tuple[str, ...] = ("**/*",)


def narrow_read(requested: list[str] | None) -> list[str]:
    """The granted read globs: what was asked (or everything), minus the host's exclusions."""
    wanted = [g for g in requested or DEFAULT_READ if isinstance(g, str) and g and ":" not in g]
    return [*(wanted or DEFAULT_READ), *HOST_EXCLUDES]


def in_grant(path: str, grant: list[str]) -> bool:
    """True when *path* matches a positive glob and no `!` exclusion."""
    return ReadGrant(grant).allows(path)
