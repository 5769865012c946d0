"""Host-owned field names (docs/architecture.md#protocol-map): the one list both the host's validator and tests use."""

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
    """JSON paths of every host-owned key at any depth of *value* (iterative: no depth limit)."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            children = []
            for key, child in node.items():
                child_path = f"{where}.{key}"
                if key in HOST_OWNED_FIELDS:
                    found.append(child_path)
                children.append((child, child_path))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed([(c, f"{where}[{i}]") for i, c in enumerate(node)]))
    return found
