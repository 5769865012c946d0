"""Provider supervision: lazy launch, lifecycle states, restart after a crash, quarantine.

A provider is launched on first use, reused while it stays healthy, relaunched after it dies,
and quarantined after `QUARANTINE_AFTER` consecutive failures (crash, timeout, malformed
initialize). Quarantine lasts for the host process's life and shows in status and authority status.
A session is initialized for one capability family (`check`, `inspect`); a provider serving both
has one warm session per family, so a query of one family never stops a request of the other.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from asp_protocol.errors import AspError, ConnectionClosed, ErrorCode, RequestTimeout
from asp_protocol.vocabulary import CapabilityFamily, DegradationReason, LifecycleState
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.edit_session import EditProviderSession
from reference_host.sessions.inspect_session import InspectProviderSession
from reference_host.sessions.session import ProviderSession, SessionFailure
from reference_host.trust.manifests import InstalledProvider

log = logging.getLogger(__name__)

QUARANTINE_AFTER = 3
SESSION_TYPES: dict[CapabilityFamily, type[ProviderSession]] = {
    "check": ProviderSession,
    "inspect": InspectProviderSession,
    "edit": EditProviderSession,
}


@dataclass
class ProviderRecord:
    """What the host knows about one provider across sessions."""

    id: str
    installed: InstalledProvider | None
    session: ProviderSession | None = None  # the most recently launched, for status
    sessions: dict[CapabilityFamily, ProviderSession] = field(default_factory=dict)
    lifecycle: LifecycleState = "exited"
    launched: bool = False
    failures: int = 0
    quarantined: bool = False
    last_reason: DegradationReason | None = None
    last_detail: str = ""
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    # started ahead of need (`Supervisor.prelaunch`), not yet initialized: `session_for` takes it
    spawned: dict[CapabilityFamily, ProviderSession] = field(default_factory=dict)

    @property
    def alive(self) -> bool:
        return self.session is not None and self.session.alive

    def current_lifecycle(self) -> LifecycleState:
        if self.quarantined:
            return "quarantined"
        if self.session is not None and self.session.alive:
            return self.session.state
        return self.lifecycle

    def server_state(self) -> str:
        """serverStatus.state: installed until launched, then ready / degraded / incompatible."""
        if self.quarantined:
            return "quarantined"
        if self.installed is None:
            return "unavailable"
        if (
            not self.installed.launchable
            or self.installed.protocol_version is None
            or self.lifecycle in ("incompatible", "malformed")
        ):
            return "incompatible"
        if self.alive:
            return "ready"
        if self.failures:
            return "degraded"
        return "installed" if not self.launched else "ready"


def launch_refusal(installed: InstalledProvider | None) -> SessionFailure | None:
    """Why the trusted environment forbids launching this provider at all (None: it may launch).

    These are static facts of the manifest, so such a provider never has a session or a quarantine.
    """
    if installed is None:
        return SessionFailure(
            "missing-required-provider",
            "unavailable",
            "no trusted manifest for this provider",
            counts=False,
        )
    if not installed.launchable:
        return SessionFailure(
            "incompatible",
            "incompatible",
            f"manifest {installed.state}: {installed.detail}",
            counts=False,
        )
    if installed.declares_write:
        return SessionFailure(
            "direct-write-risk",
            "exited",
            "manifest declares filesystem write access; not launched",
            counts=False,
        )
    return None


class Supervisor:
    """Owns every provider session; sessions run in the host's long-lived task group."""

    def __init__(
        self, providers: dict[str, InstalledProvider], workspace_root: str, assurance_mode: str
    ) -> None:
        self.providers = providers
        self.workspace_root = workspace_root
        self.assurance_mode = assurance_mode
        self.records: dict[str, ProviderRecord] = {}
        self._tg: TaskGroup | None = None

    def record(self, provider_id: str) -> ProviderRecord:
        record = self.records.get(provider_id)
        if record is None:
            record = ProviderRecord(provider_id, self.providers.get(provider_id))
            self.records[provider_id] = record
        return record

    def attach(self, tg: TaskGroup) -> None:
        self._tg = tg

    async def session_for(
        self,
        provider_id: str,
        baseline: dict[str, Any],
        timeout: float,
        *,
        family: CapabilityFamily = "check",
    ) -> ProviderSession:
        """A live session initialized for capability *family*: the warm one of that family, or a
        fresh launch; raises SessionFailure, also for a provider that may not be launched at all or
        a budget already spent."""
        session_type = SESSION_TYPES.get(family)
        if session_type is None:
            raise SessionFailure(
                "unsupported", "incompatible", f"the host has no {family} sessions", counts=False
            )
        record = self.record(provider_id)
        refusal = launch_refusal(record.installed)
        if refusal is not None:
            raise refusal
        if timeout <= 0:
            raise SessionFailure(
                "timed-out", "timed-out", "budget exhausted before launch", counts=False
            )
        async with record.lock:
            if record.quarantined:
                raise SessionFailure(
                    "quarantined",
                    "quarantined",
                    f"quarantined after {QUARANTINE_AFTER} consecutive failures ({record.last_detail})",
                    counts=False,
                )
            warm = record.sessions.get(family)
            if warm is not None and warm.alive and warm.state == "active":
                if warm.profile is None or not warm.profile.restart_needed(warm.baseline, baseline):
                    return warm
                async with warm.lock:  # an asp/0.1 provider ignores baselineChanged: restart
                    await warm.shutdown()  # (after the request it may be serving)
            if warm is not None and warm.alive:
                await warm.kill()
            assert record.installed is not None
            assert self._tg is not None, "supervisor not attached to a task group"
            session = record.spawned.pop(family, None) or session_type(
                record.installed, self.workspace_root, self.assurance_mode
            )
            if session.process is not None and not session.alive:  # exited while it waited
                await session.kill()
                session = session_type(record.installed, self.workspace_root, self.assurance_mode)
            record.session = record.sessions[family] = session
            record.launched = True
            record.lifecycle = "launched"
            try:
                await session.start(self._tg, baseline, timeout)
            except SessionFailure as failure:
                self.failed(
                    record,
                    failure.reason,
                    failure.state,
                    failure.detail,
                    counts=failure.counts_toward_quarantine,
                    session=session,
                )
                raise
            record.lifecycle = session.state
            return session

    async def prelaunch(self, provider_id: str, family: CapabilityFamily) -> None:
        """Start *provider_id*'s process for *family* now, unless a session of it is alive or
        waiting, so that its start-up (its imports) overlaps what the host does before it knows
        the baseline `initialize` carries (the work-tree snapshot); `session_for` initializes it.
        A provider that may not launch is left alone; one that fails to start is left to
        `session_for`, which launches it again and accounts for the failure."""
        session_type = SESSION_TYPES.get(family)
        record = self.record(provider_id)
        if session_type is None or self._tg is None or launch_refusal(record.installed) is not None:
            return
        async with record.lock:
            warm = record.sessions.get(family)
            if record.quarantined or family in record.spawned or (warm is not None and warm.alive):
                return
            assert record.installed is not None
            if record.installed.protocol_version is None:
                return  # session_for says why it never launches
            session = session_type(record.installed, self.workspace_root, self.assurance_mode)
            try:
                await session.spawn(self._tg)
            except SessionFailure:
                return
            record.spawned[family] = session

    async def discard_spawned(self, family: CapabilityFamily, keep: set[str]) -> None:
        """Stop the processes `prelaunch` started for *family* that are not in *keep* (the
        providers a query turned out to ask): nothing idles that no session will use."""
        for record in self.records.values():
            if record.id not in keep and family in record.spawned:
                await record.spawned.pop(family).kill()

    async def serving_session(
        self, provider_id: str, baseline: dict[str, Any], deadline: float, family: CapabilityFamily
    ) -> ProviderSession:
        """`session_for` within *deadline*, refusing a session that asked for write access at
        initialize: the host serves such a provider no content and sends it no request."""
        session = await self.session_for(
            provider_id, baseline, deadline - anyio.current_time(), family=family
        )
        if session.requests_write:
            raise SessionFailure(
                "direct-write-risk",
                session.state,
                f"{family} provider requested write access at initialize; no content served, "
                "no request sent (the host writes, providers propose)",
                counts=False,
            )
        return session

    async def request(
        self,
        provider_id: str,
        session: ProviderSession,
        method: str,
        send: Callable[[], Awaitable[Any]],
        *,
        quote_error: bool = False,
    ) -> Any:
        """Send one provider request (the caller holds `session.lock`) and account for it: a
        timeout kills the session, a timeout or crash counts toward quarantine, success resets
        the count. A failure raises SessionFailure (*quote_error* adds the provider's message)."""
        record = self.record(provider_id)
        try:
            raw = await send()
        except RequestTimeout as exc:
            working = session.working
            if working:
                # the provider showed it is working (sessions/building.py): slow, not hung
                raise SessionFailure(
                    "timed-out",
                    session.state,
                    f"{method} exceeded the call-site budget while the provider was "
                    f"{working} (not counted toward quarantine; what it finished is kept: "
                    "ask again)",
                    counts=False,
                    health=False,
                ) from exc
            await session.kill()
            self.failed(
                record,
                "timed-out",
                "timed-out",
                f"{method} exceeded the budget",
                counts=True,
                session=session,
            )
            raise SessionFailure(
                "timed-out", "timed-out", f"{method} exceeded the call-site budget", counts=True
            ) from exc
        except ConnectionClosed as exc:
            detail = f"provider exited during {method}"
            self.failed(record, "crashed", "crashed", detail, counts=True, session=session)
            raise SessionFailure("crashed", "crashed", detail, counts=True) from exc
        except AspError as exc:
            cancelled = exc.code == ErrorCode.CANCELLED.code
            if exc.message == "indexing" and exc.fail_class == "health":
                # a typed "not built yet" answer: degraded as incomplete, never a health failure
                raise SessionFailure(
                    "incomplete",
                    session.state,
                    f"provider is {str(exc.detail or 'indexing')[:200]}; retry once it is built",
                    counts=False,
                    health=False,
                ) from exc
            detail = f"{method} failed: code {exc.code}, failClass {exc.fail_class}"
            if quote_error:
                detail += f": {exc.message[:200]}"
            raise SessionFailure(
                "cancelled" if cancelled else "error",
                session.state,
                detail,
                counts=False,
                health=exc.fail_class == "health" and not cancelled,
            ) from exc
        self.succeeded(provider_id, session)
        return raw

    async def scoped(
        self,
        provider_id: str,
        session: ProviderSession,
        method: str,
        params: dict[str, Any],
        scope: EvaluationScope,
        deadline: float,
    ) -> Any:
        """`request` of one scoped *method* that must answer by *deadline* (anyio time), quoting
        the provider's error message: how inspect and edit ask a provider (the caller holds the lock)."""
        return await self.request(
            provider_id,
            session,
            method,
            lambda: session.scoped_request(
                method, params, scope, max(0.001, deadline - anyio.current_time())
            ),
            quote_error=True,
        )

    def succeeded(self, provider_id: str, session: ProviderSession) -> None:
        record = self.record(provider_id)
        record.failures = 0
        record.last_reason = None
        record.lifecycle = session.state

    def failed(
        self,
        record: ProviderRecord,
        reason: DegradationReason,
        state: LifecycleState,
        detail: str,
        *,
        counts: bool,
        session: ProviderSession | None = None,
    ) -> None:
        """Record a failure of *session*; the third consecutive counted one quarantines the provider."""
        record.lifecycle = state
        record.last_reason = reason
        record.last_detail = detail
        if session is not None:
            session.state = state
        if counts:
            record.failures += 1
            log.warning(
                "provider %s failed (%s, %d in a row): %s",
                record.id,
                reason,
                record.failures,
                detail,
            )
            if record.failures >= QUARANTINE_AFTER:
                record.quarantined = True
                log.warning("provider %s quarantined", record.id)

    async def shutdown_all(self) -> None:
        sessions = [s for r in self.records.values() for s in r.sessions.values()]
        waiting = [s for r in self.records.values() for s in r.spawned.values()]
        for record in self.records.values():
            record.spawned.clear()
        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(session.shutdown)
            for session in waiting:  # never initialized: nothing to say goodbye to
                tg.start_soon(session.kill)
