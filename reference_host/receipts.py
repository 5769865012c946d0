"""Host-authored audit receipts: every outer result carries one (docs/architecture.md#protocol-map)."""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, TypedDict

from asp_protocol.canonical import request_digest
from asp_protocol.wire import present
from reference_host import HOST_NAME, __version__

HOST_IDENTITY = {"name": HOST_NAME, "version": __version__}
_counter = itertools.count(1)


_second: tuple[float, str] = (-1.0, "")  # the last whole second formatted, and its text


def iso_now(at: float | None = None) -> str:
    """*at* (default now) as UTC ISO 8601 to the millisecond with a `Z`: what
    `datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")` writes, the second
    formatted by datetime once per second and the milliseconds here — after git answers a
    status stamps its receipt, and a datetime call then costs tens of microseconds cold."""
    global _second
    fraction, whole = math.modf(at if at is not None else time.time())
    micros = round(fraction * 1e6)  # datetime's rounding: half to even, at the microsecond
    if micros >= 1_000_000:
        whole, micros = whole + 1.0, micros - 1_000_000
    elif micros < 0:
        whole, micros = whole - 1.0, micros + 1_000_000
    known = _second  # read once: another thread may replace it meanwhile
    if whole != known[0]:
        moment = datetime.fromtimestamp(whole, tz=UTC)
        known = _second = (whole, moment.isoformat(timespec="seconds").replace("+00:00", ""))
    return f"{known[1]}.{micros // 1000:03d}Z"


@dataclass
class Clock:
    """Start time of one outer request, for the receipt's timing block."""

    wall: float = field(default_factory=time.time)
    mono: float = field(default_factory=time.perf_counter)

    _started: str | None = field(default=None, init=False, repr=False, compare=False)

    def started_at(self) -> str:
        """`startedAt`, formatted once: a status formats it while git runs (status/results.py),
        not after git, when the stamps are on the answer's path."""
        if self._started is None:
            self._started = iso_now(self.wall)
        return self._started

    def timing(self) -> dict[str, Any]:
        elapsed = max(0, round((time.perf_counter() - self.mono) * 1000))
        return {"startedAt": self.started_at(), "endedAt": iso_now(), "elapsedMs": elapsed}


def receipt_id(kind: str, clock: Clock) -> str:
    """A new receipt's id: its kind, its request's start (ms) and a per-process sequence number."""
    return f"{kind}-{int(clock.wall * 1000)}-{next(_counter)}"


def assurance_block(mode: str) -> dict[str, Any]:
    """Honest assurance: what this host achieves, and no transaction guarantee (it never writes)."""
    detail = (
        "host runs as the gate boundary (trusted --assurance gated launch); evaluation writes nothing"
        if mode == "gated"
        else "host can evaluate and report but does not control a commit boundary; evaluation writes nothing"
    )
    return {"mode": mode, "transactionGuarantee": "none", "detail": detail}


def provider_notes(notes: dict[str, list[str]], limit: int = 3000) -> str:
    """Host notes per provider (settings in force, a mapped asp/0.1 answer) for `assurance.detail`,
    the schema's one free-text place shared by the result and its receipt (docs/asp-0.1.md)."""
    parts = [
        f"{provider}: {' | '.join(dict.fromkeys(items))}"
        for provider, items in notes.items()
        if items
    ]
    return ("Provider notes (host-authored): " + " || ".join(parts))[:limit] if parts else ""


class ReceiptParties(TypedDict):
    """Who was asked: every provider's authority evidence, id and provenance."""

    authority_evidence: list[dict[str, Any]]
    provider_ids: list[str]
    provenance: list[dict[str, Any]]


NO_PARTIES = ReceiptParties(authority_evidence=[], provider_ids=[], provenance=[])


def no_coverage() -> dict[str, Any]:
    """The coverage of an answer no provider contributed to (status helpers, previews)."""
    return {"exhaustive": False, "required": [], "enrolled": [], "ran": [], "degraded": []}


@dataclass(frozen=True)
class ReceiptRequest:
    """What every receipt says about the outer request it answers, gathered once per request."""

    method: str
    params: Any
    clock: Clock
    policy_digest: str
    baseline: dict[str, Any]
    assurance: dict[str, Any]
    call_site: str | None = None

    @cached_property
    def digest(self) -> str:
        return request_digest(self.method, self.params)


def build_receipt(
    kind: str,
    request: ReceiptRequest,
    valid_as_of: dict[str, Any],
    coverage: dict[str, Any],
    parties: ReceiptParties = NO_PARTIES,
    *,
    changeset_digest: str | None = None,
    capability_family: str = "check",
    proposal_id: str | None = None,
) -> dict[str, Any]:
    """A receipt whose `failures` mirror `coverage.degraded` and whose coverage is the decision's."""
    clock = request.clock
    receipt: dict[str, Any] = {
        "receiptId": receipt_id(kind, clock),
        "issuedAt": iso_now(),
        "kind": kind,
        "host": dict(HOST_IDENTITY),
        "capabilityFamily": capability_family,
        "requestDigest": request.digest,
        "providerIds": list(dict.fromkeys(parties["provider_ids"])),
        "providerProvenance": list(parties["provenance"]),
        "policyDigest": request.policy_digest,
        "baseline": dict(request.baseline),
        "validAsOf": dict(valid_as_of),
        "coverage": coverage,
        "authorityEvidence": list(parties["authority_evidence"]),
        "assurance": request.assurance,
        "timing": clock.timing(),
        "failures": list(coverage.get("degraded", [])),
        "privateOnly": True,
        "experimental": True,
        "trustArtifact": False,
    }
    return {
        **receipt,
        **present(
            callSite=request.call_site, changesetDigest=changeset_digest, proposalId=proposal_id
        ),
    }
