"""One provider process: launched from a trusted manifest, initialized, granted, shut down.

The provider gets an argv array (never a shell) via `confine.py` (OS limits from the grant, own
process group, killed with the host), a trusted cwd (not the repository), an allowlisted
environment plus `ASP_SESSION_ID`, and reads only via `workspace/listTree` / `workspace/readBlob`:
blobs of the session's baseline and the current changeset in its read grant (`callbacks.py`).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Literal

import anyio
from anyio.abc import Process, TaskGroup
from pydantic import Field, ValidationError

from asp_protocol import ASP_LEGACY_PROTOCOL_VERSION
from asp_protocol.errors import AspError, ConnectionClosed, ErrorCode, RequestTimeout
from asp_protocol.jsonrpc import JsonRpcEndpoint
from asp_protocol.proctree import descendants
from asp_protocol.vocabulary import (
    HEALTH_REASONS,
    LEGACY_ROLE,
    CapabilityFamily,
    Comparison,
    DegradationReason,
    LegacyRole,
    LifecycleState,
)
from asp_protocol.wire import Closed, WireModel
from reference_host import HOST_NAME, __version__
from reference_host.coverage import validation_summary
from reference_host.sessions.building import watch_working_request
from reference_host.sessions.callbacks import CallbackServer, EvaluationScope
from reference_host.sessions.compat_v01 import LegacyProfile, end_quietly
from reference_host.sessions.confine import end, launch
from reference_host.sessions.stderr import StderrTail
from reference_host.trust.grants import narrow_read
from reference_host.trust.manifests import InstalledProvider

log = logging.getLogger(__name__)

Progress = Callable[[Any], Awaitable[None]]

ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "SYSTEMROOT")
RESOURCE_LIMITS = {"cpuPct": 100, "memoryMb": 1024, "fd": 256}


class _ServerInfo(WireModel):
    name: str
    version: str
    fingerprint: str


class _Permissions(Closed):
    read: list[str] | None = None
    write: bool | None = None
    network: bool | None = None
    network_allowlist: list[dict[str, Any]] | None = None
    resource_limits: dict[str, int] | None = None


class InitializeResult(Closed):
    server_info: _ServerInfo
    capability_families: list[CapabilityFamily] = Field(min_length=1)
    capabilities: dict[str, Any]
    roles: list[LegacyRole] | None = None
    requested_permissions: _Permissions | None = None
    provenance: dict[str, Any] | None = None


class CheckCapability(Closed):
    capability_version: str = Field(min_length=1)
    diagnostic_sources: list[str] = Field(min_length=1)
    scopes: list[Literal["changeset", "workspace"]] = Field(min_length=1)
    comparisons: list[Comparison] = Field(min_length=1)
    partial_results: bool
    incremental: bool
    unsupported_reporting: Literal["assessment-status"]
    fixes: bool | None = None


class SessionFailure(Exception):
    """A launch, initialize or provider request failed; carries the degradation it maps to and
    whether it is a health failure (by default: a timeout or a crash)."""

    def __init__(
        self,
        reason: DegradationReason,
        state: LifecycleState,
        detail: str,
        *,
        counts: bool,
        health: bool | None = None,
    ) -> None:
        super().__init__(detail)
        self.reason: DegradationReason = reason
        self.state: LifecycleState = state
        self.detail = detail
        self.counts_toward_quarantine = counts
        self.health = reason in HEALTH_REASONS if health is None else health


class ProviderSession:
    """A live provider process and its JSON-RPC endpoint, required to serve one capability family.

    This class serves `check`; a subclass per other family (`InspectProviderSession`,
    `EditProviderSession`) overrides `family` and `_accept_capability` (starting from
    `_family_block`), and may watch its requests (`_watch_request`). `Supervisor.session_for(...,
    family=)` picks the class.
    """

    family: ClassVar[CapabilityFamily] = "check"

    def __init__(
        self, installed: InstalledProvider, workspace_root: str, assurance_mode: str
    ) -> None:
        self.installed = installed
        self.id = installed.id
        self.session_id = uuid.uuid4().hex
        self.workspace_root = workspace_root
        self.assurance_mode = assurance_mode
        self.protocol_version = installed.protocol_version
        # The asp/0.1 compatibility profile (compat_v01.py), only when the manifest negotiates 0.1.
        self.profile = (
            LegacyProfile() if self.protocol_version == ASP_LEGACY_PROTOCOL_VERSION else None
        )
        self.process: Process | None = None
        self.endpoint: JsonRpcEndpoint | None = None
        self.state: LifecycleState = "launched"
        self.init: InitializeResult | None = None
        self.check: CheckCapability | None = None
        self.block: dict[str, Any] | None = None  # an accepted inspect or edit capability block
        self.working: str | None = None  # what the provider said showing it works (building.py)
        self.callbacks = CallbackServer(self.id)
        self.requests_write = False
        self.baseline: dict[str, Any] | None = None
        self.stderr = StderrTail()
        self.lock = anyio.Lock()
        self.exited = anyio.Event()

    @property
    def served_ever(self) -> set[str]:
        """Every blob id this session's provider has been served (for the host's checks)."""
        return self.callbacks.served_ever

    @property
    def alive(self) -> bool:
        return self.endpoint is not None and not self.endpoint.closed and not self.exited.is_set()

    def environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
        env["ASP_SESSION_ID"] = self.session_id
        return env

    async def spawn(self, tg: TaskGroup) -> None:
        """Start the process and serve its pipes, nothing sent yet: what can run before the
        baseline is known (`Supervisor.prelaunch`); `start` spawns first when this was not done."""
        try:
            self.process = await launch(
                self.installed.argv(), RESOURCE_LIMITS, self.installed.cwd, self.environment()
            )
        except OSError as exc:
            raise SessionFailure(
                "unavailable", "unavailable", f"launch failed: {exc.strerror or exc}", counts=True
            ) from exc
        assert self.process.stdout is not None and self.process.stdin is not None
        self.endpoint = JsonRpcEndpoint(
            self.process.stdout, self.process.stdin, name=f"provider:{self.id}"
        )
        self.callbacks.register(self.endpoint)
        tg.start_soon(self._run)

    async def start(self, tg: TaskGroup, baseline: dict[str, Any], timeout: float) -> None:
        """Spawn, `initialize` (exact version), validate, then send the narrowed `initialized` grant."""
        if self.protocol_version is None:
            raise SessionFailure(
                "skewed",
                "incompatible",
                "manifest lists no protocol version this host speaks",
                counts=False,
            )
        if self.process is None:
            await self.spawn(tg)
        assert self.endpoint is not None
        self.state = "initializing"
        self.baseline = baseline
        params = {
            "protocolVersion": self.protocol_version,
            "host": {"name": HOST_NAME, "version": __version__},
            "hostCapabilities": {"progress": True, "readBlob": True, "putBlob": False}
            | (self.profile.host_capabilities if self.profile is not None else {}),
            "workspace": {"root": self.workspace_root, "baseline": baseline},
            "assuranceMode": self.assurance_mode,
        }
        try:
            raw = await self.endpoint.request("initialize", params, timeout=timeout)
        except (RequestTimeout, ConnectionClosed, AspError) as exc:
            await self.kill()
            raise self._initialize_failure(exc) from exc
        try:
            self._accept_initialize(raw)
        except SessionFailure:
            await self.kill()
            raise
        self.callbacks.grant = narrow_read(
            self.init.requested_permissions.read
            if self.init and self.init.requested_permissions
            else None
        )
        granted = {
            "read": self.callbacks.grant,
            "write": False,
            "network": False,
            "resourceLimits": {**RESOURCE_LIMITS, "wallclockMs": int(timeout * 1000)},
        }
        try:
            await self.endpoint.notify(
                "initialized", {"grantedPermissions": granted, "baseline": baseline}
            )
        except ConnectionClosed as exc:
            await self.kill()
            raise self._initialize_failure(exc) from exc
        self.state = "active"

    def _initialize_failure(
        self, exc: RequestTimeout | ConnectionClosed | AspError
    ) -> SessionFailure:
        """What an `initialize` request that got no result maps to."""
        if isinstance(exc, RequestTimeout):
            return SessionFailure(
                "timed-out", "timed-out", "initialize did not answer within budget", counts=True
            )
        if isinstance(exc, ConnectionClosed):
            return SessionFailure(
                "crashed", "crashed", "provider exited during initialize", counts=True
            )
        if exc.fail_class == "contract" or exc.code == ErrorCode.UNSUPPORTED_VERSION.code:
            return SessionFailure(
                "skewed",
                "incompatible",
                f"initialize refused {self.protocol_version}: code {exc.code}",
                counts=False,
            )
        return SessionFailure(
            "error",
            "degraded",
            f"initialize failed: code {exc.code} ({exc.fail_class})",
            counts=True,
        )

    def _malformed(self, what: str, exc: ValidationError | None = None) -> SessionFailure:
        """A provider answer it got wrong (counted toward quarantine), with its validation errors."""
        self.state = "malformed"
        detail = f"malformed {what}" + (f": {validation_summary(exc)}" if exc else "")
        return SessionFailure("malformed", "malformed", detail, counts=True)

    def _incompatible(self, detail: str) -> SessionFailure:
        """A provider that does not serve this session's family (not counted toward quarantine)."""
        self.state = "incompatible"
        return SessionFailure("unsupported", "incompatible", detail, counts=False)

    def _accept_initialize(self, raw: Any) -> None:
        try:
            self.init = InitializeResult.model_validate(raw)
        except ValidationError as exc:
            raise self._malformed("initialize result", exc) from exc
        self._accept_capability(self.init)
        permissions = self.init.requested_permissions
        self.requests_write = bool(permissions and permissions.write)

    def _accept_capability(self, init: InitializeResult) -> None:
        """Refuse a provider that does not advertise this session's family (here: `check`)."""
        block = init.capabilities.get("check") or init.capabilities.get("judge")
        if block is None or "check" not in init.capability_families:
            raise self._incompatible("provider does not advertise the required check capability")
        if self.profile is not None:
            block = self.profile.map_capability(block)
        try:
            self.check = CheckCapability.model_validate(block)
        except ValidationError as exc:
            raise self._malformed("check capability", exc) from exc

    def _family_block(self, init: InitializeResult) -> dict[str, Any]:
        """The capability block of this session's family (or of its legacy role name), or
        incompatible: how the inspect and edit sessions start their capability test."""
        caps = init.capabilities
        block = caps.get(self.family, caps.get(LEGACY_ROLE[self.family]))
        if not isinstance(block, dict) or self.family not in init.capability_families:
            raise self._incompatible(f"provider does not advertise the {self.family} capability")
        return block

    async def _run(self) -> None:
        assert self.endpoint is not None and self.process is not None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.stderr.drain, self.process.stderr)
                await self.endpoint.serve()
                tg.cancel_scope.cancel()
        finally:
            self.exited.set()
            if self.state not in (
                "crashed",
                "timed-out",
                "quarantined",
                "incompatible",
                "malformed",
                "shutting-down",
            ):
                self.state = "exited"

    def stderr_excerpt(self) -> str:
        """The end of the provider's stderr, capped and fenced as untrusted (see `stderr.py`)."""
        return self.stderr.excerpt()

    async def evaluate(
        self,
        params: dict[str, Any],
        scope: EvaluationScope,
        timeout: float,
        on_progress: Progress | None,
    ) -> Any:
        """Send `check/evaluate` with *scope* as the readable set; raises what the endpoint raises."""
        if self.protocol_version == ASP_LEGACY_PROTOCOL_VERSION:
            params = {**params, "callSite": params.get("callSite", "gate")}
        else:
            params = {k: v for k, v in params.items() if k != "callSite"}
        return await self.scoped_request("check/evaluate", params, scope, timeout, on_progress)

    def _watch_request(
        self, scope: EvaluationScope, on_progress: Progress | None
    ) -> Progress | None:
        """Hook run as a scoped request starts: what to hand the endpoint as its progress callback
        (a check request whose progress advances is slow, not hung: sessions/building.py)."""
        return watch_working_request(self, on_progress)

    async def scoped_request(
        self,
        method: str,
        params: dict[str, Any],
        scope: EvaluationScope,
        timeout: float,
        on_progress: Progress | None = None,
    ) -> Any:
        """One provider request during which callbacks may read *scope* (the caller holds `lock`);
        the provider hears `workspace/baselineChanged` first when the baseline moved."""
        on_progress = self._watch_request(scope, on_progress)
        assert self.endpoint is not None
        if self.baseline != scope.baseline:
            await self.endpoint.notify("workspace/baselineChanged", {"baseline": scope.baseline})
            self.baseline = scope.baseline
        self.callbacks.scope = scope
        try:
            return await self.endpoint.request(
                method, params, timeout=timeout, on_progress=on_progress
            )
        finally:
            self.callbacks.scope = None

    # -- shutdown -------------------------------------------------------------------------------

    async def kill(self, known: list[tuple[int, int]] | None = None) -> None:
        """Stop the process now (a hung or hostile provider gets no grace) with its whole tree;
        *known* is what was found under it before it was asked to exit (`confine.end`)."""
        if self.process is not None:
            await end(self.process, known or [])

    async def shutdown(self, grace: float = 1.0) -> None:
        """Polite `shutdown` + `exit`, then kill whatever is left (0.1: close stdin, terminate)."""
        known = descendants(self.process.pid) if self.process is not None else []
        if self.profile is not None:
            if self.alive:
                self.state = "shutting-down"
            await end_quietly(self.process, self.endpoint, grace)
            await self.kill(known)
            return
        if self.alive and self.endpoint is not None:
            self.state = "shutting-down"
            with anyio.move_on_after(grace):
                try:
                    await self.endpoint.request("shutdown", None, timeout=grace)
                    await self.endpoint.notify("exit", None)
                except (AspError, ConnectionClosed, RequestTimeout):
                    pass
                await self.exited.wait()
        await self.kill(known)
