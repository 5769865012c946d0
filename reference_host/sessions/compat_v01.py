"""The `asp/0.1` compatibility profile of the inner seam, used only when the trusted manifest
negotiates `asp/0.1` (docs/asp-0.1.md says what is mapped and what is lost).

Providers in the field still answer in the 0.1 dialect. This module turns their answers into the
v1 shapes the host judges, and nothing else: every Assessment it maps still goes through the same
checks as a native one (host-owned fields at any depth, schema, identity, `validAsOf`, namespaced
codes, pins, budgets). Mapping is deterministic and never guesses — what cannot be converted is
dropped with a note, and every mapped Assessment carries a host evidence entry saying so.

What differs from v1, and what the profile does:
- capability block without `capabilityVersion`/`partialResults`/`incremental`/
  `unsupportedReporting`: filled with safe values (no partial results, not incremental,
  unsupported reported in the Assessment); extra keys ignored; scopes outside v1 ignored;
- check selection only via a top-level `checks` parameter: sent from trusted settings;
- `timing` `{durationMs, phases, processState}`: its duration becomes `elapsedMs`;
- `configDigest` follows no shared algorithm: treated as opaque evidence that must stay the same
  within a session, and the result says configuration identity was not verifiable;
- 1-based `{line, column}` positions: converted to zero-based `{line, char}`, or the range is
  dropped with a note when they are not positive integers;
- evidence kinds outside the v1 enum: dropped with a note;
- `workspace/baselineChanged` ignored by the provider: the host restarts the session instead;
- `shutdown` answered `-32601`: the host closes stdin and then terminates the process quietly.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from typing import Any, get_args

import anyio
from anyio.abc import Process

from asp_protocol import ASP_LEGACY_PROTOCOL_VERSION
from asp_protocol.errors import AspError, ConnectionClosed, RequestTimeout
from asp_protocol.host_owned import find_host_owned_fields
from asp_protocol.jsonrpc import JsonRpcEndpoint
from asp_protocol.models import Evidence
from asp_protocol.vocabulary import Comparison

log = logging.getLogger(__name__)

LEGACY_CAPABILITY_VERSION = "check/0.1"
V1_SCOPES = ("changeset", "workspace")
V1_COMPARISONS: tuple[str, ...] = get_args(Comparison)
V1_EVIDENCE_KINDS = frozenset(get_args(Evidence.model_fields["kind"].annotation))
CAPABILITY_KEYS = frozenset(
    {
        "capabilityVersion",
        "diagnosticSources",
        "scopes",
        "comparisons",
        "partialResults",
        "incremental",
        "unsupportedReporting",
        "fixes",
    }
)
MAPPED_EVIDENCE_ID = "host:asp-0.1-profile"
POINT_KEYS = ("line", "column", "endLine", "endColumn", "position")
UNVERIFIABLE_CONFIG = (
    "configuration identity not verifiable for an asp/0.1 provider: its configDigest follows no "
    "shared algorithm, so the host holds it as opaque evidence that must stay stable per session"
)


def _names(values: Any, limit: int = 8) -> str:
    """A short, capped listing of provider-supplied names for a host note."""
    shown = [str(v)[:40] for v in list(values)[:limit]]
    more = len(values) - len(shown) if hasattr(values, "__len__") else 0
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def _position(value: Any) -> dict[str, int] | None:
    """A 1-based `{line, column}` as zero-based `{line, char}`; a v1 position unchanged; else None."""
    if not isinstance(value, dict):
        return None
    if set(value) == {"line", "char"}:
        line, char = value["line"], value["char"]
        ok = all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (line, char))
        return {"line": line, "char": char} if ok else None
    if set(value) == {"line", "column"}:
        line, column = value["line"], value["column"]
        ok = all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (line, column))
        return {"line": line - 1, "char": column - 1} if ok else None
    return None


class LegacyProfile:
    """Per-session state of the 0.1 profile: the opaque configDigest and the notes of one mapping."""

    protocol_version = ASP_LEGACY_PROTOCOL_VERSION
    # 0.1 hosts announced the tree callback explicitly (as in the recorded handshake)
    host_capabilities: dict[str, bool] = {"listTree": True}

    def __init__(self) -> None:
        self.config_digest: str | None = None
        self.capability_notes: list[str] = []
        self.known_checks: tuple[str, ...] = ()

    # -- initialize -----------------------------------------------------------------------------

    def map_capability(self, block: Any) -> Any:
        """The 0.1 check capability block as a v1 block with safe values (non-objects unchanged,
        so the v1 validation rejects them)."""
        if not isinstance(block, dict):
            return block
        notes = []
        ignored = sorted(set(block) - CAPABILITY_KEYS)
        if ignored:
            notes.append(f"capability keys the host does not use ignored: {_names(ignored)}")
        rules = block.get("rules")
        if isinstance(rules, list):
            self.known_checks = tuple(r for r in rules if isinstance(r, str))[:500]
        scopes = block.get("scopes")
        if isinstance(scopes, list):
            dropped = [s for s in scopes if s not in V1_SCOPES]
            scopes = [s for s in scopes if s in V1_SCOPES]
            if dropped:
                notes.append(f"scopes outside v1 ignored: {_names(dropped)}")
        comparisons = block.get("comparisons")
        if isinstance(comparisons, list):
            comparisons = [c for c in comparisons if c in V1_COMPARISONS]
        version = block.get("capabilityVersion")
        mapped: dict[str, Any] = {
            "capabilityVersion": version
            if isinstance(version, str) and version
            else LEGACY_CAPABILITY_VERSION,
            "diagnosticSources": block.get("diagnosticSources"),
            "scopes": scopes,
            "comparisons": comparisons,
            "partialResults": False,
            "incremental": False,
            "unsupportedReporting": "assessment-status",
        }
        if isinstance(block.get("fixes"), bool):
            mapped["fixes"] = block["fixes"]
        self.capability_notes = notes
        return mapped

    # -- check/evaluate -------------------------------------------------------------------------

    def evaluate_params(
        self, params: dict[str, Any], checks: tuple[str, ...] | None
    ) -> dict[str, Any]:
        """0.1 params: no `configuration` (ignored by such providers), the trusted `checks`."""
        out = {k: v for k, v in params.items() if k != "configuration"}
        if checks is not None:
            out["checks"] = list(checks)
        return out

    def unknown_checks(self, checks: tuple[str, ...] | None) -> list[str]:
        """Selected checks the provider did not list at initialize (it would refuse the request)."""
        if not checks or not self.known_checks:
            return []
        return [c for c in checks if c not in self.known_checks]

    def map_assessment(self, raw: Any) -> tuple[Any, list[str]]:
        """A 0.1 Assessment in v1 shape plus the notes of what was mapped or dropped.

        An answer that is not an object, or that carries a host-owned field anywhere, is returned
        untouched: the v1 checks must see (and reject) exactly what the provider sent.
        """
        if not isinstance(raw, dict) or find_host_owned_fields(raw):
            return raw, []
        mapped = copy.deepcopy(raw)
        notes: list[str] = []
        self._map_timing(mapped, notes)
        self._map_positions(mapped, notes)
        self._map_evidence(mapped, notes)
        summary = "asp/0.1 answer mapped to v1 by the host's compatibility profile"
        if notes:
            summary += ": " + "; ".join(notes)
        evidence = mapped.get("evidence")
        if evidence is None:
            evidence = mapped["evidence"] = []
        if isinstance(evidence, list):
            evidence.append(
                {
                    "kind": "message",
                    "id": MAPPED_EVIDENCE_ID,
                    "message": f"{summary}. {UNVERIFIABLE_CONFIG}."[:2000],
                }
            )
        return mapped, notes

    def result_note(self, notes: list[str]) -> str:
        """The host note a decision carries for one mapped answer (schema-valid: a detail string)."""
        parts = ["answered in asp/0.1; mapped to v1 by the host's compatibility profile"]
        parts.extend(self.capability_notes[:2])
        parts.extend(notes[:4])
        digest = f" (reported {self.config_digest[:80]})" if self.config_digest else ""
        parts.append(f"configuration identity not verifiable{digest}")
        return "; ".join(parts)

    def expected_config_digest(self, raw: Any) -> str | None:
        """The configDigest this session must keep reporting (the first one seen); None when
        *raw* carries none (the v1 checks then reject it)."""
        provider = raw.get("provider") if isinstance(raw, dict) else None
        reported = provider.get("configDigest") if isinstance(provider, dict) else None
        if not isinstance(reported, str) or not reported:
            return None
        if self.config_digest is None:
            self.config_digest = reported
        return self.config_digest

    @staticmethod
    def _map_timing(mapped: dict[str, Any], notes: list[str]) -> None:
        timing = mapped.get("timing")
        if not isinstance(timing, dict) or "durationMs" not in timing:
            return
        duration = timing.get("durationMs")
        if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration >= 0:
            mapped["timing"] = {"elapsedMs": int(duration)}
            notes.append("timing.durationMs mapped to elapsedMs (phases, processState dropped)")
        else:
            mapped["timing"] = {}
            notes.append("timing.durationMs is not a non-negative number: timing dropped")

    @staticmethod
    def _map_positions(mapped: dict[str, Any], notes: list[str]) -> None:
        diagnostics = mapped.get("diagnostics")
        if not isinstance(diagnostics, list):
            return
        converted = dropped = 0
        for diagnostic in diagnostics:
            location = diagnostic.get("location") if isinstance(diagnostic, dict) else None
            if not isinstance(location, dict):
                continue
            loose = [key for key in POINT_KEYS if key in location]
            for key in loose:  # a position beside the path, not a range: no end to convert
                del location[key]
            dropped += bool(loose)
            if "range" not in location:
                continue
            span = location["range"]
            start = _position(span.get("start")) if isinstance(span, dict) else None
            end = _position(span.get("end")) if isinstance(span, dict) else None
            if start is None or end is None:
                del location["range"]
                dropped += 1
                continue
            if span != {"start": start, "end": end}:
                converted += 1
            location["range"] = {"start": start, "end": end}
        if converted:
            notes.append(f"{converted} 1-based position range(s) converted to zero-based")
        if dropped:
            notes.append(f"{dropped} position(s) without a usable range dropped (path kept)")

    @staticmethod
    def _map_evidence(mapped: dict[str, Any], notes: list[str]) -> None:
        evidence = mapped.get("evidence")
        if not isinstance(evidence, list):
            return
        kept: list[Any] = []
        dropped: list[Any] = []
        for entry in evidence:
            if isinstance(entry, dict) and entry.get("kind") not in V1_EVIDENCE_KINDS:
                dropped.append(entry.get("kind"))
            else:
                kept.append(entry)
        if dropped:
            mapped["evidence"] = kept
            notes.append(
                f"{len(dropped)} evidence entr(ies) of kinds outside v1 dropped: {_names(dropped)}"
            )

    # -- session lifecycle ----------------------------------------------------------------------

    @staticmethod
    def restart_needed(current: dict[str, Any] | None, wanted: dict[str, Any]) -> bool:
        """Such providers ignore `workspace/baselineChanged`: a moved baseline needs a new session."""
        return current != wanted


async def end_quietly(
    process: Process | None, endpoint: JsonRpcEndpoint | None, grace: float
) -> None:
    """Ask politely once; a `-32601` (or no answer) is expected, then close stdin and terminate."""
    if endpoint is not None and not endpoint.closed:
        with anyio.move_on_after(grace):
            with contextlib.suppress(AspError, ConnectionClosed, RequestTimeout):
                await endpoint.request("shutdown", None, timeout=grace)
    if process is None:
        return
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        with anyio.move_on_after(grace):
            await process.wait()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            with anyio.move_on_after(grace):
                await process.wait()
    log.debug("asp/0.1 provider session ended by closing stdin")
