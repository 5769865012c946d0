"""Telling a slow provider from a hung one by its progress, and index builds that outlive requests.

A request that runs into its deadline counts toward the provider's quarantine (sessions/supervisor.py)
unless the provider showed it was working: `session.working` holds what it last said then, and
the supervisor neither counts such a timeout nor kills the session, so what the provider finished
(a check's findings per blob, an index's parsed files) is kept and the next request resumes from
it. A check session qualifies when its progress message changed during the request (a provider
repeating one message is not shown to be working); inspect and edit sessions when they report
"indexing". Without it, three attempts at evaluating a large real change (2,823 changed files of
Django at call-site interactive) quarantined the Python check for the life of the host.

The built-in inspect and edit providers also build their whole-tree index in the background, and
the build goes on reading blobs after the request that started it has ended: for those sessions
the baseline part of a request's scope stays readable once it ends (`callbacks.standing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reference_host.sessions.callbacks import EvaluationScope

if TYPE_CHECKING:  # session.py imports this module
    from reference_host.sessions.session import Progress, ProviderSession

INDEXING = "indexing"
MAX_PROGRESS_TEXT = 200


def watch_working_request(session: ProviderSession, on_progress: Progress | None) -> Progress:
    """The progress callback for one check request of *session* (see the module docstring)."""
    session.working = None
    last: list[str] = []

    async def progress(value: Any) -> None:
        message = value.get("message") if isinstance(value, dict) else None
        if isinstance(message, str):
            if last and message != last[0]:
                session.working = f"working ({message[:MAX_PROGRESS_TEXT]})"
            last[:] = [message]
        if on_progress is not None:
            await on_progress(value)

    return progress


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
    session.working = None

    async def progress(value: Any) -> None:
        message = value.get("message") if isinstance(value, dict) else None
        if isinstance(message, str) and message.startswith(INDEXING):
            session.working = message[:MAX_PROGRESS_TEXT]
        if on_progress is not None:
            await on_progress(value)

    return progress
