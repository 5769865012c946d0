"""The `policy` block of a repository policy (`asp-config`): the values ASP v1 admits.

`authorityModel`, `policyChangeActivation` and `candidatePolicyAuthority` each have exactly one
legal value in the v1 schema, and `missingHost.gate` must fail closed; only the interactive and
sweep missing-host behaviour is a choice. Every policy this project writes uses this one block.
"""

from __future__ import annotations

from typing import Any, Literal

MissingHost = Literal["warn-open", "fail-closed"]


def policy_rules(
    *, interactive: MissingHost = "warn-open", sweep: MissingHost = "fail-closed"
) -> dict[str, Any]:
    """A fresh `policy` block (callers may mutate it)."""
    return {
        "authorityModel": "explicit-pinned-provider",
        "policyChangeActivation": "base-policy-two-phase",
        "candidatePolicyAuthority": "trusted-base-or-organization-floor",
        "missingHost": {"interactive": interactive, "gate": "fail-closed", "sweep": sweep},
    }
