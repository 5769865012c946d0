"""Requests to a provider whose index build may outlive them (inspect and edit sessions).

The built-in inspect and edit providers build a whole-tree index in the background: a request
that meets a build still running answers "indexing" (or runs into its deadline while the provider
reports indexing progress), and the build goes on reading blobs after that request has ended. So
for these sessions the baseline part of a request's scope stays readable once it ends
(`callbacks.standing`), and the last "indexing" progress message is kept on the session, so the
supervisor takes a deadline hit while indexing for a slow provider, never a hung one (it is not
counted toward quarantine).
"""

from __future__ import annotations

from typing import Any

from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.session import Progress, ProviderSession

INDEXING = "indexing"
MAX_PROGRESS_TEXT = 200


def watch_building_request(
    session: ProviderSession, scope: EvaluationScope, on_progress: Progress | None
) -> Progress:
    """The progress callback for one request of *session* (see the module docstring)."""
    session.callbacks.standing = EvaluationScope(
        baseline=scope.baseline,
        index=scope.index,
        referenced={},
        load=scope.load,
        load_many=scope.load_many,
        by_blob=scope.by_blob,
    )
    session.indexing = None

    async def progress(value: Any) -> None:
        message = value.get("message") if isinstance(value, dict) else None
        if isinstance(message, str) and message.startswith(INDEXING):
            session.indexing = message[:MAX_PROGRESS_TEXT]
        if on_progress is not None:
            await on_progress(value)

    return progress
