"""Inspect provider sessions: the check-oriented `ProviderSession` accepting an `inspect` provider.

`ProviderSession` refuses a provider that does not advertise `check`; an inspect provider needs the
same launch, grant and callback machinery with a different capability test, plus a request that
sets the callback scope like `evaluate` does. Wiring note: once `Supervisor.session_for` takes a
capability family, `open_inspect_session` reduces to that call.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from asp_protocol.errors import AspError
from reference_host.context import HostContext
from reference_host.session import (
    EvaluationScope,
    InitializeResult,
    ProviderSession,
    SessionFailure,
)

INSPECT_VERBS = ("symbols", "references", "callers", "callees", "impact")


def _first_error(error: ValidationError) -> str:
    item = error.errors()[0]
    return f"{'.'.join(str(p) for p in item['loc']) or '(root)'}: {item['msg']}"


class InspectProviderSession(ProviderSession):
    """A provider session whose required capability is `inspect` (or its legacy alias `sense`)."""

    inspect: dict[str, Any] | None = None

    def _accept_initialize(self, raw: Any) -> None:
        try:
            self.init = InitializeResult.model_validate(raw)
        except ValidationError as exc:
            self.state = "malformed"
            raise SessionFailure(
                "malformed",
                "malformed",
                f"malformed initialize result: {_first_error(exc)}",
                counts=True,
            ) from exc
        caps = self.init.capabilities
        block = caps.get("inspect", caps.get("sense"))
        if not isinstance(block, dict) or "inspect" not in self.init.capability_families:
            self.state = "incompatible"
            raise SessionFailure(
                "unsupported",
                "incompatible",
                "provider does not advertise the inspect capability",
                counts=False,
            )
        verbs = block.get("verbs", [])
        query = block.get("query", [])
        if (
            not isinstance(verbs, list)
            or any(v not in INSPECT_VERBS for v in verbs)
            or not isinstance(query, list)
        ):
            self.state = "malformed"
            raise SessionFailure(
                "malformed", "malformed", "malformed inspect capability", counts=True
            )
        self.inspect = block
        permissions = self.init.requested_permissions
        self.requests_write = bool(permissions and permissions.write)

    def method_for(self, verb: str) -> str | None:
        """`inspect/<verb>` when the provider lists it among its query names, else `sense/<verb>`;
        None when the verb is not advertised at all."""
        block = self.inspect or {}
        if verb not in block.get("verbs", []):
            return None
        return f"inspect/{verb}" if f"inspect/{verb}" in block.get("query", []) else f"sense/{verb}"

    async def inspect_request(
        self, method: str, params: dict[str, Any], scope: EvaluationScope, timeout: float
    ) -> Any:
        """Send one inspect request with *scope* as the readable set (the caller holds `lock`)."""
        assert self.endpoint is not None
        if self.baseline != scope.baseline:
            await self.endpoint.notify("workspace/baselineChanged", {"baseline": scope.baseline})
            self.baseline = scope.baseline
        self.scope = scope
        try:
            return await self.endpoint.request(method, params, timeout=timeout)
        finally:
            self.scope = None


async def open_inspect_session(
    ctx: HostContext, provider_id: str, baseline: dict[str, Any], timeout: float
) -> InspectProviderSession:
    """The warm inspect session of *provider_id*, or a fresh supervised launch; raises SessionFailure."""
    supervisor = ctx.supervisor
    record = supervisor.record(provider_id)
    async with record.lock:
        if record.quarantined:
            raise SessionFailure(
                "quarantined", "quarantined", record.last_detail or "quarantined", counts=False
            )
        current = record.session
        if (
            isinstance(current, InspectProviderSession)
            and current.alive
            and current.state == "active"
        ):
            return current
        if current is not None and current.alive:
            await current.kill()
        installed = record.installed
        if installed is None:
            raise SessionFailure(
                "missing", "unavailable", "no trusted manifest for this provider", counts=False
            )
        if not installed.launchable:
            raise SessionFailure(
                "incompatible",
                "incompatible",
                f"manifest {installed.state}: {installed.detail}",
                counts=False,
            )
        if installed.declares_write:
            raise SessionFailure(
                "direct-write-risk",
                "exited",
                "manifest declares filesystem write access; not launched",
                counts=False,
            )
        task_group = supervisor._tg  # the supervisor's long-lived group (see module docstring)
        assert task_group is not None, "supervisor not attached to a task group"
        session = InspectProviderSession(
            installed, supervisor.workspace_root, supervisor.assurance_mode
        )
        record.session = session
        record.launched = True
        record.lifecycle = "launched"
        try:
            await session.start(task_group, baseline, timeout)
        except SessionFailure as failure:
            supervisor.failed(
                record,
                failure.reason,
                failure.state,
                failure.detail,
                counts=failure.counts_toward_quarantine,
            )
            raise
        except AspError as error:  # pragma: no cover - start maps endpoint errors itself
            raise SessionFailure("error", "degraded", error.message, counts=True) from error
        record.lifecycle = session.state
        return session
