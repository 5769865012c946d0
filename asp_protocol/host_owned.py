"""Host-owned field names (docs/architecture.md#protocol-map): the one list both the host's validator and tests use."""

from __future__ import annotations

import re
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


_CONTAINERS = (dict, list)
# a quoted host-owned name; the lookahead on the first letters makes most quotes fail at once
_QUOTED_KEY = re.compile(
    '"(?=[' + "".join(sorted({n[0] for n in HOST_OWNED_FIELDS})) + "])"
    "(?:" + "|".join(sorted(HOST_OWNED_FIELDS)) + ')"'
)


_QUOTED_KEY_BYTES = re.compile(_QUOTED_KEY.pattern.encode("ascii"))


def dumped_text_may_hold_host_owned(text: str | bytes) -> bool:
    """False only when *text*, which `json.dumps` or `framing.compact_json` wrote, cannot hold a
    host-owned key: both write every key quoted and never escape ASCII letters, which is all
    these names are made of. (Not
    for text from elsewhere: a peer may write a key with `\\u` escapes.) True also when a name
    merely occurs as a string value; the caller then walks the value itself."""
    if isinstance(text, bytes):
        return _QUOTED_KEY_BYTES.search(text) is not None
    return _QUOTED_KEY.search(text) is not None


def has_host_owned_fields(value: Any) -> bool:
    """True when a host-owned key occurs at any depth of *value*: the fast check that builds no
    paths and pushes no scalars (answers of a few hundred KiB pass it on every query)."""
    stack: list[Any] = [value]
    disjoint = HOST_OWNED_FIELDS.isdisjoint
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if not disjoint(node):
                return True
            stack.extend([c for c in node.values() if isinstance(c, _CONTAINERS)])
        elif isinstance(node, list):
            stack.extend([c for c in node if isinstance(c, _CONTAINERS)])
    return False


def find_host_owned_fields(value: Any, path: str = "$") -> list[str]:
    """JSON paths of every host-owned key at any depth of *value* (iterative: no depth limit)."""
    if not has_host_owned_fields(value):
        return []
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
