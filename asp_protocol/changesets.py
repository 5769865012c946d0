"""ChangeSet intake: the one rule for repo-relative paths and for what makes a ChangeSet malformed.

Host and providers both receive ChangeSets from a peer they do not trust; both apply this.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.models import ChangeSet
from asp_protocol.vocabulary import OUTER_BLOB_REF


class PathError(ValueError):
    """A path that may not name a workspace file (absolute, `..`, `.git/`, empty, NUL)."""


def validate_path(path: str) -> str:
    """Return *path* if it is a clean repo-relative POSIX path, else raise PathError."""
    if not isinstance(path, str) or not path or "\x00" in path or "\\" in path:
        raise PathError(f"invalid path {path!r}")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise PathError(f"absolute path {path!r}")
    for part in path.split("/"):
        if part in ("", ".", ".."):
            raise PathError(f"path {path!r} has an empty, '.' or '..' segment")
        if part == ".git":
            raise PathError(f"path {path!r} is inside .git")
    return path


def _malformed(message: str, detail: str) -> AspError:
    return AspError(ErrorCode.INVALID_CHANGESET, message, detail=detail[:300])


def parse_changeset(raw: Any, *, outer_blob_ids: bool = False) -> ChangeSet:
    """Schema, clean paths, one change per path; anything else is -32013 (failClass input).

    `outer_blob_ids` applies the outer seam's stricter blobRef (`blob:sha256:<hex>` only).
    """
    try:
        changeset = ChangeSet.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise _malformed("malformed changeset", f"{where}: {first['msg']}") from None
    seen: set[str] = set()
    for change in changeset.changes:
        if outer_blob_ids:
            for identity in (change.before, change.after):
                if identity is not None and not OUTER_BLOB_REF.match(identity):
                    raise _malformed(
                        "blob ids must be blob:sha256:<lowercase hex> (the outer seam's blobRef)",
                        identity,
                    )
        try:
            for path in (change.path, change.from_):
                if path is not None:
                    validate_path(path)
        except PathError as exc:
            raise _malformed("invalid changeset path", str(exc)) from None
        if change.path in seen:
            raise _malformed("duplicate change path", change.path)
        seen.add(change.path)
    return changeset
