"""Host pages of an inspect answer: the `pageBytes` and `cursor` request keys of `host/queryInspect`.

The host asks each provider for one page (`pageBytes`, default 256 KiB, at most 4 MiB: an agent
may raise it) from the offsets its cursor carries, refuses a provider page that exceeds the bound,
and hands back a cursor for the next page. A cursor is bound to the question and the baseline it
was issued for; another question's or a tampered cursor is an input error. A page that is not the
last one is marked `truncated` (so the answer is not exhaustive) and carries `data.page.cursor`.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from asp_protocol.canonical import digest
from asp_protocol.errors import AspError, ErrorCode

DEFAULT_PAGE_BYTES = 256 * 1024
MIN_PAGE_BYTES = 4 * 1024
MAX_PAGE_BYTES = 4 * 1024 * 1024
PAGE_SLACK_BYTES = 16 * 1024  # what a provider page may exceed its asked size by
ENVELOPE_BYTES = 8 * 1024  # coverage, receipt fields and the results wrapper
LISTS = {
    "impact": ("impactedNodes", "impactedFiles", "edges"),
    "graph": ("nodes", "edges"),
}
MAX_CURSOR = 2048


def _invalid(message: str) -> AspError:
    return AspError(ErrorCode.INVALID_PARAMS, message)


def question_digest(request: dict[str, Any], baseline: dict[str, Any]) -> str:
    """What a cursor is bound to: the request without its paging keys, and the baseline."""
    question = {k: v for k, v in request.items() if k not in ("cursor", "pageBytes")}
    return digest([question, {k: baseline.get(k) for k in ("rev", "dirty")}])[-16:]


def page_bytes(request: dict[str, Any]) -> int:
    value = request.get("pageBytes", DEFAULT_PAGE_BYTES)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid("request.pageBytes must be an integer")
    if not MIN_PAGE_BYTES <= value <= MAX_PAGE_BYTES:
        raise _invalid(f"request.pageBytes must be in [{MIN_PAGE_BYTES}, {MAX_PAGE_BYTES}]")
    return value


def decode_cursor(request: dict[str, Any], question: str) -> dict[str, int]:
    """The offsets of the cursor in *request* (none: the first page)."""
    value = request.get("cursor")
    if value is None:
        return {}
    if not isinstance(value, str) or len(value) > MAX_CURSOR:
        raise _invalid("request.cursor is not one this host issued")
    try:
        raw = json.loads(base64.urlsafe_b64decode(value.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeEncodeError):
        raise _invalid("request.cursor is not one this host issued") from None
    if not isinstance(raw, dict) or raw.get("q") != question:
        raise _invalid("request.cursor belongs to another question or baseline")
    offset = raw.get("o")
    if not isinstance(offset, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in offset.items()
    ):
        raise _invalid("request.cursor is malformed")
    return offset


def encode_cursor(offset: dict[str, int], question: str) -> str:
    raw = json.dumps({"o": offset, "q": question}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode()).decode("ascii")


def provider_page_bytes(bound: int) -> int:
    """What to ask a provider for so that the whole host answer stays within *bound*: the host
    repeats the page's blob ids in its own `validAsOf` and in the receipt, and adds its envelope."""
    return max(MIN_PAGE_BYTES, (bound - ENVELOPE_BYTES) * 55 // 100)


def oversized(size: int, bound: int) -> int | None:
    """*size* (of a provider page as JSON, measured when it was checked) when it is larger than
    *bound* allows, else None."""
    return size if size > provider_page_bytes(bound) + PAGE_SLACK_BYTES else None


def paginate(
    verb: str,
    result: dict[str, Any],
    offset: dict[str, int],
    bound: int,
    question: str,
) -> bool:
    """Add `data.page` to a checked provider result; True when more pages follow."""
    data = result["data"]
    lists = LISTS["impact" if verb == "impact" else "graph"]
    sizes = {
        "impactedNodes": len(result.get("nodes", [])),
        "impactedFiles": len(data.get("impactedFiles", [])),
        "nodes": len(result.get("nodes", [])),
        "edges": len(result.get("edges", [])),
    }
    returned = {name: sizes[name] for name in lists}
    following: dict[str, int] | None = None
    total: dict[str, int] | None = None
    provider_page = data.get("page") if verb != "impact" else None
    if isinstance(provider_page, dict):
        nxt, tot = provider_page.get("next"), provider_page.get("total")
        if isinstance(nxt, dict):
            following = {n: int(nxt[n]) for n in lists if isinstance(nxt.get(n), int)}
        if isinstance(tot, dict):
            total = {n: int(tot[n]) for n in lists if isinstance(tot.get(n), int)}
    elif verb == "impact" and data.get("truncated") is True and any(returned.values()):
        following = {n: offset.get(n, 0) + returned[n] for n in lists}
    page: dict[str, Any] = {
        "pageBytes": bound,
        "offset": {n: offset.get(n, 0) for n in lists},
        "returned": returned,
        "cursor": encode_cursor(following, question) if following else None,
    }
    if total is not None:
        page["total"] = total
    data["page"] = page
    if following:
        data["truncated"] = True
    return bool(following)
