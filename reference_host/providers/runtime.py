"""The provider side of the ASP inner seam (docs/architecture.md#protocol-map), shared by every built-in provider process.

One `ProviderRuntime` owns a JSON-RPC stdio session: exact `initialize` version negotiation, the
`initialized` grant, the lifecycle gate in front of every capability method (-32010
`provider-not-initialized` until the grant arrives), `workspace/baselineChanged`, `shutdown`/`exit`,
and a per-request `Call` that carries the host-callback client and the `$/progress` helper.
Logs go to stderr only: stdout is the wire.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from asp_protocol import ASP_PROTOCOL_VERSION, CHECK_CAPABILITY_VERSION
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.framing import stdio_byte_streams
from asp_protocol.grants import ReadGrant
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext
from asp_protocol.vocabulary import CAPABILITY_FAMILIES
from reference_host.providers import PROVIDER_VERSION, PUBLISHER
from reference_host.providers.callbacks import HostCallbacks

log = logging.getLogger("asp.provider")

SessionState = Literal["spawned", "initializing", "active", "shutting-down"]
READ_ONLY_REQUEST: dict[str, Any] = {"read": ["**"], "write": False, "network": False}


@dataclass
class Session:
    """What the provider knows about its host session: negotiated version, grant, baseline."""

    protocol_version: str
    state: SessionState = "spawned"
    host: dict[str, Any] | None = None
    workspace_root: str | None = None
    baseline: dict[str, Any] | None = None
    granted: dict[str, Any] | None = None
    read_grant: ReadGrant = field(default_factory=lambda: ReadGrant(()))


@dataclass
class Call:
    """One capability request: its params, the session, the callback client and progress."""

    params: Any
    session: Session
    callbacks: HostCallbacks
    context: RequestContext
    partial_results: bool

    async def progress(self, *, percentage: int | None = None, message: str | None = None) -> None:
        """Send a `$/progress` `report` for this request; a no-op unless partialResults is advertised."""
        if not self.partial_results:
            return
        value: dict[str, Any] = {"kind": "report"}
        if percentage is not None:
            value["percentage"] = max(0, min(100, int(percentage)))
        if message is not None:
            value["message"] = message
        await self.context.progress(value)


CapabilityHandler = Callable[[Call], Awaitable[Any]]


def check_capability(
    sources: list[str], comparisons: list[str], *, partial_results: bool = True
) -> dict[str, Any]:
    """The `check` capability block a provider advertises at `initialize`, built in one place so
    every built-in provider states the same scopes and reporting."""
    return {
        "capabilityVersion": CHECK_CAPABILITY_VERSION,
        "diagnosticSources": list(sources),
        "scopes": ["changeset", "workspace"],
        "comparisons": list(comparisons),
        "partialResults": partial_results,
        "incremental": False,
        "unsupportedReporting": "assessment-status",
    }


def _require_object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AspError(ErrorCode.INVALID_PARAMS, f"{what} must be an object")
    return value


class ProviderRuntime:
    """A provider process's session; subclass hooks let a scripted provider misbehave on purpose."""

    def __init__(
        self,
        *,
        provider_id: str,
        fingerprint: str,
        capabilities: dict[str, Any],
        version: str = PROVIDER_VERSION,
        protocol_version: str = ASP_PROTOCOL_VERSION,
        requested_permissions: dict[str, Any] | None = None,
        publisher: str = PUBLISHER,
    ) -> None:
        self.provider_id = provider_id
        self.version = version
        self.fingerprint = fingerprint
        self.capabilities = capabilities
        self.requested_permissions = dict(requested_permissions or READ_ONLY_REQUEST)
        self.publisher = publisher
        self.session = Session(protocol_version)
        self._handlers: dict[str, tuple[CapabilityHandler, bool]] = {}
        self._shutdown_requested = False
        self._exit_code: int | None = None
        self._stop: anyio.CancelScope | None = None
        self.endpoint: JsonRpcEndpoint | None = None

    # -- what subclasses and providers configure ------------------------------------------------

    def capability(
        self, method: str, handler: CapabilityHandler, *, cooperative_cancel: bool = False
    ) -> None:
        """Serve a capability method; it runs only in the `active` state."""
        self._handlers[method] = (handler, cooperative_cancel)

    def initialize_result(self) -> dict[str, Any]:
        """The `initialize` result (initialize.schema.json#/$defs/result)."""
        families = [f for f in CAPABILITY_FAMILIES if f in self.capabilities]
        return {
            "serverInfo": {
                "name": self.provider_id,
                "version": self.version,
                "fingerprint": self.fingerprint,
            },
            "capabilityFamilies": families,
            "capabilities": self.capabilities,
            "requestedPermissions": self.requested_permissions,
            "provenance": {"publisher": self.publisher},
        }

    async def before_initialize(self, params: Any) -> None:
        """Hook run first on every `initialize` request (a scripted provider may crash or refuse here)."""

    @property
    def partial_results(self) -> bool:
        return any(
            isinstance(block, dict) and block.get("partialResults") is True
            for block in self.capabilities.values()
        )

    # -- lifecycle handlers ---------------------------------------------------------------------

    async def _initialize(self, params: Any, ctx: RequestContext) -> dict[str, Any]:
        await self.before_initialize(params)
        params = _require_object(params, "initialize params")
        offered = params.get("protocolVersion")
        if offered != self.session.protocol_version:
            raise AspError(
                ErrorCode.UNSUPPORTED_VERSION,
                "unsupported-version",
                detail=f"this provider speaks only {self.session.protocol_version}; offered {str(offered)[:80]!r}",
            )
        if self.session.state != "spawned":
            raise AspError(ErrorCode.INVALID_REQUEST, "already-initialized")
        host = _require_object(params.get("host"), "initialize host")
        workspace = _require_object(params.get("workspace"), "initialize workspace")
        baseline = _require_object(workspace.get("baseline"), "initialize workspace.baseline")
        if not isinstance(baseline.get("rev"), str) or not isinstance(workspace.get("root"), str):
            raise AspError(
                ErrorCode.INVALID_PARAMS, "initialize workspace needs root and baseline.rev strings"
            )
        self.session.host = host
        self.session.workspace_root = workspace["root"]
        self.session.baseline = baseline
        self.session.state = "initializing"
        log.info(
            "%s initialized by %s for %s", self.provider_id, host.get("name"), workspace["root"]
        )
        return self.initialize_result()

    async def _initialized(self, params: Any) -> None:
        if self.session.state != "initializing":
            log.warning("initialized notification in state %s ignored", self.session.state)
            return
        granted = params.get("grantedPermissions") if isinstance(params, dict) else None
        baseline = params.get("baseline") if isinstance(params, dict) else None
        if (
            not isinstance(granted, dict)
            or not isinstance(granted.get("resourceLimits"), dict)
            or not isinstance(baseline, dict)
            or not isinstance(baseline.get("rev"), str)
        ):
            log.error("malformed initialized notification: the provider stays not-initialized")
            return
        if granted.get("write") or granted.get("network"):
            log.warning("grant includes write/network; this provider uses neither")
        read = granted.get("read")
        self.session.granted = granted
        self.session.read_grant = ReadGrant(read if isinstance(read, list) else ())
        self.session.baseline = baseline
        self.session.state = "active"

    async def _baseline_changed(self, params: Any) -> None:
        baseline = params.get("baseline") if isinstance(params, dict) else None
        if isinstance(baseline, dict) and isinstance(baseline.get("rev"), str):
            self.session.baseline = baseline

    async def _shutdown(self, params: Any, ctx: RequestContext) -> None:
        self._shutdown_requested = True
        self.session.state = "shutting-down"
        return None

    async def _exit(self, params: Any) -> None:
        self._exit_code = 0 if self._shutdown_requested else 1
        if self._stop is not None:
            self._stop.cancel()

    def _gate(
        self, method: str, handler: CapabilityHandler
    ) -> Callable[[Any, RequestContext], Awaitable[Any]]:
        async def gated(params: Any, ctx: RequestContext) -> Any:
            if self.session.state == "shutting-down":
                raise AspError(ErrorCode.HEALTH_NOT_READY, "provider-shutting-down")
            if self.session.state != "active":
                raise AspError(
                    ErrorCode.HEALTH_NOT_READY,
                    "provider-not-initialized",
                    detail=f"{method} before the initialized notification",
                )
            assert self.endpoint is not None
            call = Call(
                params, self.session, HostCallbacks(self.endpoint), ctx, self.partial_results
            )
            return await handler(call)

        return gated

    # -- running --------------------------------------------------------------------------------

    async def serve(self, receive: ByteReceiveStream, send: ByteSendStream) -> int:
        """Serve one session until `exit` or end of input; returns the process exit status."""
        endpoint = JsonRpcEndpoint(receive, send, name=self.provider_id)
        self.endpoint = endpoint
        endpoint.register("initialize", self._initialize)
        endpoint.register("shutdown", self._shutdown)
        endpoint.on_notification("initialized", self._initialized)
        endpoint.on_notification("exit", self._exit)
        endpoint.on_notification("workspace/baselineChanged", self._baseline_changed)
        for method, (handler, cooperative) in self._handlers.items():
            endpoint.register(method, self._gate(method, handler), cooperative_cancel=cooperative)
        with anyio.CancelScope() as scope:
            self._stop = scope
            await endpoint.serve()
        return self._exit_code if self._exit_code is not None else 0


def configure_logging() -> None:
    """Log to stderr only; `ASP_PROVIDER_LOG_LEVEL` selects the level (default WARNING)."""
    level = os.environ.get("ASP_PROVIDER_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="%(name)s %(levelname)s %(message)s",
    )


def run_stdio(runtime: ProviderRuntime) -> int:
    """Run *runtime* on this process's stdin/stdout and end the process with its exit status.

    `os._exit` because the stdin reader thread may still be blocked in `read()` after `exit`.
    """
    configure_logging()
    receive, send = stdio_byte_streams()
    try:
        code = anyio.run(runtime.serve, receive, send)
    except KeyboardInterrupt:
        code = 130
    sys.stderr.flush()
    os._exit(code)
