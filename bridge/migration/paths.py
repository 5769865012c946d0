"""Finding paths, normalized as strings: the bridge never stats, resolves or opens a client's path.

An old tool's finding names a file by URI or path; parity only needs it repo-relative. The client's
path is client data, so it is compared with the configured repository path by string operations
alone (`posixpath.normpath`, prefix checks). Only the configured root itself may be resolved
(it is configuration, not client input), so a finding written against either spelling of the
root — as configured, or with its symlinks resolved — is made relative.
"""

from __future__ import annotations

import functools
import os
import posixpath
from urllib.parse import unquote, urlparse


def uri_to_path(uri: str) -> str:
    """A SARIF artifact URI as a path: `file:` URIs lose their scheme, other schemes stay as given."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if parsed.scheme and len(parsed.scheme) > 1:
        return uri  # another scheme: kept as given, it will not match a repository path
    return unquote(uri)


@functools.lru_cache(maxsize=16)
def _root_spellings(repo_root: str) -> tuple[str, ...]:
    """The configured root as written (made absolute) and resolved; configuration, not client data."""
    written = posixpath.normpath(os.path.abspath(repo_root).replace(os.sep, "/"))
    resolved = posixpath.normpath(os.path.realpath(repo_root).replace(os.sep, "/"))
    return tuple(dict.fromkeys((written, resolved)))


def normalize_path(path: str, repo_root: str | None = None) -> str:
    """Repo-relative POSIX path: an absolute path under *repo_root* is made relative, `./` and
    `..` folded — as strings only. An absolute path elsewhere stays absolute (it matches nothing)."""
    text = path.replace("\\", "/")
    normalized = posixpath.normpath(text) if text else text
    if repo_root and posixpath.isabs(normalized):
        for root in _root_spellings(repo_root):
            if normalized == root:
                return ""
            prefix = root.rstrip("/") + "/"
            if normalized.startswith(prefix):
                return normalized[len(prefix) :]
    return "" if normalized == "." else normalized
