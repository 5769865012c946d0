"""Inspect provider sessions: a `ProviderSession` whose required capability family is `inspect`.

Launch, grant, callbacks and scoped requests are the base session's; only the capability test at
initialize differs, plus which method name a verb maps to. `Supervisor.session_for(...,
family="inspect")` launches this class.
"""

from __future__ import annotations

from typing import Any, ClassVar

from asp_protocol.vocabulary import CapabilityFamily
from reference_host.sessions.session import InitializeResult, ProviderSession, SessionFailure

INSPECT_VERBS = ("symbols", "references", "callers", "callees", "impact")


class InspectProviderSession(ProviderSession):
    """A provider session whose required capability is `inspect` (or its legacy alias `sense`)."""

    family: ClassVar[CapabilityFamily] = "inspect"
    inspect: dict[str, Any] | None = None

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
