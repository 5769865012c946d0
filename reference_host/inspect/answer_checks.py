"""Host-side checks of an inspect provider's answer before it reaches a harness (docs/architecture.md#protocol-map).

The answer must have the graph (or impact) envelope shape, carry no host-owned field at any depth,
be `validAsOf` the baseline the host asked for, and name only blobs of that baseline or the
request's changeset that the host actually served this session. Anything else is degraded
coverage (`malformed` or `stale`), never passed through.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Any

from asp_protocol.framing import UnencodableMessage, compact_json
from asp_protocol.host_owned import dumped_text_may_hold_host_owned, find_host_owned_fields
from asp_protocol.vocabulary import OUTER_BLOB_REF

NODE_KINDS = frozenset({"file", "module", "class", "function", "type", "test"})
EDGE_KINDS = frozenset(
    {"calls", "imports", "inherits", "implements", "contains", "tested-by", "depends-on"}
)
GRAPH_KEYS = frozenset({"nodes", "edges", "data", "validAsOf"})
IMPACT_KEYS = frozenset(
    {"changedNodes", "impactedNodes", "impactedFiles", "edges", "truncated", "validAsOf"}
)
MAX_ITEMS = 50_000


@dataclass
class InspectCheck:
    """A provider answer as the host judged it: the outer graph result, or why there is none."""

    result: dict[str, Any] | None
    reason: str | None = None
    detail: str = ""
    blobs: tuple[str, ...] = ()
    truncated: bool = False
    size: int = 0  # bytes of the provider's page as JSON


def _bad(reason: str, detail: str) -> InspectCheck:
    return InspectCheck(None, reason, detail[:500])


def _nodes_ok(value: Any) -> bool:
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        return False
    for node in value:
        if (
            not isinstance(node, dict)
            or not isinstance(node.get("id"), str)
            or not isinstance(node.get("name"), str)
        ):
            return False
        location = node.get("location")
        if (
            node.get("kind") not in NODE_KINDS
            or not isinstance(location, dict)
            or not isinstance(location.get("path"), str)
        ):
            return False
    return True


def _edges_ok(value: Any) -> bool:
    if not isinstance(value, list) or len(value) > MAX_ITEMS * 4:
        return False
    return all(
        isinstance(e, dict)
        and e.get("kind") in EDGE_KINDS
        and isinstance(e.get("from"), str)
        and isinstance(e.get("to"), str)
        for e in value
    )


def check_inspect_result(
    raw: Any, verb: str, *, rev: str, allowed_blobs: Set[str], served_ever: set[str]
) -> InspectCheck:
    """Validate one provider answer and project it onto `inspectProviderGraphResult`."""
    if not isinstance(raw, dict):
        return _bad("malformed", "inspect result is not an object")
    # written once (decoded JSON always dumps): the page's size, and a text search that spares
    # the walk over every container unless a host-owned name occurs at all
    try:
        text = compact_json(raw)
    except UnencodableMessage:
        return _bad("malformed", "inspect result holds a string with no UTF-8 form")
    forged = find_host_owned_fields(raw) if dumped_text_may_hold_host_owned(text) else []
    if forged:
        return _bad(
            "malformed", f"provider answer carries host-owned field(s): {', '.join(forged[:5])}"
        )
    valid = raw.get("validAsOf")
    if (
        not isinstance(valid, dict)
        or not isinstance(valid.get("rev"), str)
        or not isinstance(valid.get("blobs"), list)
    ):
        return _bad("malformed", "validAsOf must be {rev, blobs}")
    blobs = valid["blobs"]
    # an id the host served this session is one it made (a well-formed blob id): only others
    # need the pattern, which on a page naming hundreds of files was most of this check
    if not all(isinstance(b, str) and (b in served_ever or OUTER_BLOB_REF.match(b)) for b in blobs):
        return _bad("malformed", "validAsOf.blobs must be sha256 blob ids")
    if valid["rev"] != rev:
        return _bad(
            "stale",
            f"answer is valid as of {valid['rev'][:80]!r}, not the requested baseline {rev!r}",
        )
    foreign = [b for b in blobs if b not in allowed_blobs]
    if foreign:
        return _bad(
            "stale", f"answer names {len(foreign)} blob(s) outside the baseline, e.g. {foreign[0]}"
        )
    unread = [b for b in blobs if b not in served_ever]
    if unread:
        return _bad(
            "malformed",
            f"answer claims {len(unread)} blob(s) the host never served, e.g. {unread[0]}",
        )
    unique = tuple(dict.fromkeys(blobs))
    host_valid = {"rev": rev, "blobs": list(unique)}
    if verb == "impact":
        if set(raw) - IMPACT_KEYS or not IMPACT_KEYS - {"edges", "truncated"} <= set(raw):
            return _bad(
                "malformed",
                "impact result must be {changedNodes, impactedNodes, impactedFiles, validAsOf}",
            )
        files = raw["impactedFiles"]
        if (
            not _nodes_ok(raw["changedNodes"])
            or not _nodes_ok(raw["impactedNodes"])
            or not _edges_ok(raw.get("edges", []))
        ):
            return _bad("malformed", "impact nodes or edges do not match the graph envelope")
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            return _bad("malformed", "impactedFiles must be strings")
        truncated = raw.get("truncated") is True
        data = {
            "verb": verb,
            "changedNodes": raw["changedNodes"],
            "impactedFiles": files,
            "truncated": truncated,
        }
        result = {
            "nodes": raw["impactedNodes"],
            "edges": raw.get("edges", []),
            "data": data,
            "validAsOf": host_valid,
        }
        return InspectCheck(result, blobs=unique, truncated=truncated, size=len(text))
    if set(raw) - GRAPH_KEYS:
        return _bad(
            "malformed",
            f"unknown result field(s): {', '.join(sorted(set(raw) - GRAPH_KEYS))[:200]}",
        )
    if not _nodes_ok(raw.get("nodes", [])) or not _edges_ok(raw.get("edges", [])):
        return _bad("malformed", "nodes or edges do not match the graph envelope")
    data = raw.get("data", {})
    if not isinstance(data, dict):
        return _bad("malformed", "data must be an object")
    result = {
        "nodes": raw.get("nodes", []),
        "edges": raw.get("edges", []),
        "data": data,
        "validAsOf": host_valid,
    }
    return InspectCheck(
        result, blobs=unique, truncated=data.get("truncated") is True, size=len(text)
    )
