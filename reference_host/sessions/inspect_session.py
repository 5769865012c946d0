"""Inspect provider sessions: a `ProviderSession` whose required capability family is `inspect`.

Launch, grant, callbacks and scoped requests are the base session's; only the capability test at
initialize differs, plus which method name a verb maps to. `Supervisor.session_for(...,
family="inspect")` launches this class.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from asp_protocol.vocabulary import CapabilityFamily
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.session import InitializeResult, ProviderSession, SessionFailure
from reference_host.trust.manifests import InstalledProvider

INSPECT_VERBS = ("symbols", "references", "callers", "callees", "impact")
INDEXING = "indexing"
MAX_PROGRESS_TEXT = 200


class InspectProviderSession(ProviderSession):
    """A provider session whose required capability is `inspect` (or its legacy alias `sense`)."""

    family: ClassVar[CapabilityFamily] = "inspect"

    def __init__(
        self, installed: InstalledProvider, workspace_root: str, assurance_mode: str
    ) -> None:
        super().__init__(installed, workspace_root, assurance_mode)
        self.inspect: dict[str, Any] | None = None  # the accepted inspect capability block
        self.indexing: str | None = None  # the provider's last "indexing" progress this request

    async def scoped_request(
        self,
        method: str,
        params: dict[str, Any],
        scope: EvaluationScope,
        timeout: float,
        on_progress: Callable[[Any], Awaitable[None]] | None = None,
    ) -> Any:
        """The base request, plus: the baseline part of *scope* stays readable after it ends (the
        provider's index build may outlive the request), and "indexing" progress is remembered so
        a deadline hit while indexing is not taken for a hung provider."""
        self.callbacks.standing = EvaluationScope(
            baseline=scope.baseline,
            index=scope.index,
            referenced={},
            load=scope.load,
            load_many=scope.load_many,
            by_blob=scope.by_blob,
        )
        self.indexing = None

        async def progress(value: Any) -> None:
            message = value.get("message") if isinstance(value, dict) else None
            if isinstance(message, str) and message.startswith(INDEXING):
                self.indexing = message[:MAX_PROGRESS_TEXT]
            if on_progress is not None:
                await on_progress(value)

        return await super().scoped_request(method, params, scope, timeout, progress)

    def _accept_capability(self, init: InitializeResult) -> None:
        caps = init.capabilities
        block = caps.get("inspect", caps.get("sense"))
        if not isinstance(block, dict) or "inspect" not in init.capability_families:
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

    def method_for(self, verb: str) -> str | None:
        """`inspect/<verb>` when the provider lists it among its query names, else `sense/<verb>`;
        None when the verb is not advertised at all."""
        block = self.inspect or {}
        if verb not in block.get("verbs", []):
            return None
        return f"inspect/{verb}" if f"inspect/{verb}" in block.get("query", []) else f"sense/{verb}"
