"""Host-owned field names (PROTOCOL §7): the one list both the host's validator and tests use."""

from __future__ import annotations

from typing import Any

HOST_OWNED_FIELDS: frozenset[str] = frozenset(
    {
        # check-assessment / diagnostic propertyNames
        "authority",
        "assurance",
        "decision",
        "disposition",
        "pass",
        "transactionGuarantee",
        "verdict",
        "applyReceipt",
        "receipt",
        "policyDigest",
        "policyRef",
        "policyReference",
        "authorityEvidence",
        "hostDecision",
        "applyAttempt",
        "applyResult",
        # edit schemas and ADR 0025's recursive guard
        "command",
        "commands",
        "script",
        "shellCommand",
        # conformance fixtures' forged set
        "apply",
    }
)


def find_host_owned_fields(value: Any, path: str = "$") -> list[str]:
    """JSON paths of every host-owned key at any depth of *value*."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, child in value.items():
            child_path = f"{path}.{key}"
            if key in HOST_OWNED_FIELDS:
                found.append(child_path)
            found.extend(find_host_owned_fields(child, child_path))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(find_host_owned_fields(child, f"{path}[{index}]"))
    return found
