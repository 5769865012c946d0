"""Edit provider sessions: a `ProviderSession` whose required capability family is `edit`.

Launch, grant (read-only: an edit provider proposes, the host writes), callbacks and scoped
requests are the base session's; only the capability test at initialize differs, and, as for
inspect, its index build may outlive a request (sessions/building.py).
`Supervisor.session_for(..., family="edit")` launches this class.
"""

from __future__ import annotations

from typing import ClassVar

from asp_protocol.vocabulary import CapabilityFamily
from reference_host.sessions.building import watch_building_request
from reference_host.sessions.callbacks import EvaluationScope
from reference_host.sessions.session import InitializeResult, Progress, ProviderSession


class EditProviderSession(ProviderSession):
    """A provider session whose required capability is `edit` (or its legacy alias `act`)."""

    family: ClassVar[CapabilityFamily] = "edit"

    def _watch_request(
        self, scope: EvaluationScope, on_progress: Progress | None
    ) -> Progress | None:
        return watch_building_request(self, scope, on_progress)

    def _accept_capability(self, init: InitializeResult) -> None:
        block = self._family_block(init)
        operations = block.get("operations")
        if (
            not isinstance(operations, list)
            or not operations
            or not all(isinstance(o, str) for o in operations)
            or not isinstance(block.get("capabilityVersion"), str)
        ):
            raise self._malformed(f"{self.family} capability")
        self.block = block
