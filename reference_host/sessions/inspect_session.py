"""Inspect provider sessions: a `ProviderSession` whose required capability family is `inspect`.

Launch, grant, callbacks and scoped requests are the base session's; only the capability test at
initialize differs, plus which method name a verb maps to. `Supervisor.session_for(...,
family="inspect")` launches this class.
"""

from __future__ import annotations

from typing import ClassVar

from asp_protocol.vocabulary import CapabilityFamily
from reference_host.sessions.building import watch_building_request
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.session import InitializeResult, Progress, ProviderSession

INSPECT_VERBS = ("symbols", "references", "callers", "callees", "impact")


class InspectProviderSession(ProviderSession):
    """A provider session whose required capability is `inspect` (or its legacy alias `sense`)."""

    family: ClassVar[CapabilityFamily] = "inspect"

    def _watch_request(
        self, scope: EvaluationScope, on_progress: Progress | None
    ) -> Progress | None:
        return watch_building_request(self, scope, on_progress)  # builds outlive requests

    def _accept_capability(self, init: InitializeResult) -> None:
        block = self._family_block(init)
        verbs = block.get("verbs", [])
        query = block.get("query", [])
        if (
            not isinstance(verbs, list)
            or any(v not in INSPECT_VERBS for v in verbs)
            or not isinstance(query, list)
        ):
            raise self._malformed(f"{self.family} capability")
        self.block = block

    def method_for(self, verb: str) -> str | None:
        """`inspect/<verb>` when the provider lists it among its query names, else `sense/<verb>`;
        None when the verb is not advertised at all."""
        block = self.block or {}
        if verb not in block.get("verbs", []):
            return None
        return f"inspect/{verb}" if f"inspect/{verb}" in block.get("query", []) else f"sense/{verb}"
