"""Symbolic links among the files the Python check reads: the code is the target's, not the link's.

git stores a symbolic link as a blob holding the target path, and a ChangeSet carries that blob
like any other: `alias.py -> real.py` arrives as the six bytes `real.py`. Analysed as Python, that
is `undefined name 'real'`, a false deny on every repository that links a module (a sweep of a
tree with hundreds of linked test modules was denied on each). Python imports the target's code
through the link, so that is what is checked, under the link's path.

A blob is taken for a link only when it has a link's shape (one line, no newline, no NUL, not
absolute) *and* names, relative to the link's directory, a file of the same state: a changed
path's after-state, or a file of the baseline listing. Anything else is analysed as it is, so a
one-line file nobody linked is replaced only when its whole content is another file's path. A
link out of the workspace is reported not checked; one to a path the snapshot lacks is analysed
as it is.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from asp_protocol.errors import AspError, ProtocolViolation
from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.check_reads import Target, read_batched

MAX_LINK_BYTES = 4096  # Linux PATH_MAX


def _link_text(data: bytes) -> str | None:
    """*data* as a link's target text when it has a link's shape: one line, no NUL, UTF-8."""
    if not data or len(data) > MAX_LINK_BYTES or b"\n" in data or b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text == text.strip() else None


def _resolved(path: str, text: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(path), text))


def link_target(path: str, data: bytes) -> str | None:
    """The workspace path *data* names when it can be a symbolic link at *path*, else None."""
    text = _link_text(data)
    if text is None or text.startswith("/"):
        return None
    resolved = _resolved(path, text)
    if resolved in (".", "..") or resolved.startswith("../") or resolved == path:
        return None
    return resolved


def outside_link(path: str, data: bytes) -> str | None:
    """The target text when *data* reads as a link out of the workspace (absolute, or climbing
    above its root). Its code is not in any snapshot: it is reported not checked, where analysed
    as Python it was a syntax error, a deny about the link's text."""
    text = _link_text(data)
    if text is None:
        return None
    resolved = _resolved(path, text)
    if text.startswith("/") or resolved == ".." or resolved.startswith("../"):
        return text
    return None


class LinkFollower:
    """Replaces each linked target's blob with its target's (after, and before for `introduced`)."""

    def __init__(self, callbacks: HostCallbacks, baseline: dict[str, object] | None) -> None:
        self._callbacks = callbacks
        self._baseline = baseline

    async def follow(
        self, targets: list[Target], served: dict[str, bytes]
    ) -> tuple[dict[str, bytes], list[str], list[tuple[str, str]]]:
        """*served* with the targets' bytes added, why any of them could not be read, and the
        (path, reason) of each link out of the workspace, taken out of *targets*: not checked."""
        gone: list[tuple[str, str]] = []
        for target in list(targets):
            data = served.get(target.after) if target.after else None
            text = outside_link(target.path, data) if data is not None else None
            if text is not None:
                targets.remove(target)
                why = f"{target.path[:200]}: a symbolic link out of the workspace ({text[:200]})"
                gone.append((target.path, why + ", not checked"))
        links: dict[int, tuple[str, str | None]] = {}  # index -> (after target, before target)
        for index, target in enumerate(targets):
            data = served.get(target.after) if target.after else None
            found = link_target(target.path, data) if data is not None else None
            if found is not None:
                old = served.get(target.before) if target.before else None
                links[index] = (found, link_target(target.before_path, old) if old else None)
        if not links:
            return served, [], gone
        after = {t.path: t.after for t in targets if t.changed}
        asked = {a for a, _ in links.values() if a not in after}
        asked |= {b for _, b in links.values() if b is not None}
        listed = await self._baseline_blobs(sorted(asked))
        wanted: list[str] = []
        for index, (path, before_path) in links.items():
            blob = after[path] if path in after else listed.get(path)
            if blob is None:
                continue  # not a file of this state: analysed as it is
            target = targets[index]
            # an old link is judged by its old target; one whose target is gone has no before
            before = target.before if before_path is None else listed.get(before_path)
            targets[index] = replace(target, after=blob, before=before)
            wanted.extend(b for b in (blob, before) if b and b not in served)
        if not wanted:
            return served, [], gone
        more, missing = await read_batched(self._callbacks, list(dict.fromkeys(wanted)))
        return {**served, **more}, missing, gone

    async def _baseline_blobs(self, paths: list[str]) -> dict[str, str]:
        if not paths:
            return {}
        try:
            listing = await self._callbacks.list_tree(paths=paths, baseline=self._baseline)
        except (AspError, ProtocolViolation):
            return {}  # unlisted: those links are analysed as they are
        wanted = set(paths)
        return {e.path: e.blob_id for e in listing.entries if e.path in wanted and e.kind == "file"}
