"""Edit provider sessions: a `ProviderSession` whose required capability family is `edit`.

Launch, grant (read-only: an edit provider proposes, the host writes), callbacks and scoped
requests are the base session's; only the capability test at initialize differs.
`Supervisor.session_for(..., family="edit")` launches this class.
"""

from __future__ import annotations

from typing import Any, ClassVar

from asp_protocol.vocabulary import CapabilityFamily
from reference_host.sessions.session import InitializeResult, ProviderSession, SessionFailure
from reference_host.trust.manifests import InstalledProvider


class EditProviderSession(ProviderSession):
    """A provider session whose required capability is `edit` (or its legacy alias `act`)."""

    family: ClassVar[CapabilityFamily] = "edit"

    def __init__(
        self, installed: InstalledProvider, workspace_root: str, assurance_mode: str
    ) -> None:
        super().__init__(installed, workspace_root, assurance_mode)
        self.edit: dict[str, Any] | None = None  # the accepted edit capability block

    def _accept_capability(self, init: InitializeResult) -> None:
        caps = init.capabilities
        block = caps.get("edit", caps.get("act"))
        if not isinstance(block, dict) or "edit" not in init.capability_families:
            self.state = "incompatible"
            raise SessionFailure(
                "unsupported",
                "incompatible",
                "provider does not advertise the edit capability",
                counts=False,
            )
        operations = block.get("operations")
        if (
            not isinstance(operations, list)
            or not operations
            or not all(isinstance(o, str) for o in operations)
            or not isinstance(block.get("capabilityVersion"), str)
        ):
            self.state = "malformed"
            raise SessionFailure("malformed", "malformed", "malformed edit capability", counts=True)
        self.edit = block
