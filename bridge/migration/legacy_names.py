"""Every legacy ASP name (roles, `sense/*`/`judge/*`/`act/*` methods, the old tools `crg`/`rox`/`cix`)
mapped to its canonical capability family and verb, so a migration check can ask the host about it.

The table follows the ASP definition's legacy-name and method sections (docs/architecture.md#protocol-map). Tool surfaces are named loosely by the protocol;
their verb mapping is our reading of those names and is marked `inferred` in the data.
"""

from __future__ import annotations

from typing import Literal

from asp_protocol.vocabulary import CAPABILITY_FAMILIES, LEGACY_ROLE, CapabilityFamily, LegacyRole
from bridge.migration.base import Model

NameKind = Literal[
    "legacy-role",
    "legacy-method",
    "legacy-tool",
    "legacy-tool-surface",
    "canonical-family",
    "canonical-method",
    "outer-method",
    "unknown",
]

OUTER_METHOD: dict[str, str] = {
    "inspect": "host/queryInspect",
    "check": "host/evaluateChangeset",
    "edit": "host/requestEditPlan",
}
INSPECT_VERBS: tuple[str, ...] = ("references", "callers", "callees", "symbols", "impact", "query")


class NameMapping(Model):
    """What one name means in ASP terms: family, verb, and the outer-seam method that serves it."""

    requested: str = ""
    name: str
    known: bool
    kind: NameKind
    family: CapabilityFamily | None = None
    verb: str | None = None
    operation: str | None = None
    canonical: str | None = None
    legacy_alias: LegacyRole | None = None
    outer_method: str | None = None
    tool: str | None = None
    surfaces: tuple[str, ...] = ()
    inferred: bool = False
    note: str = ""


def _entry(
    name: str,
    kind: NameKind,
    family: CapabilityFamily | None,
    verb: str | None = None,
    *,
    operation: str | None = None,
    canonical: str | None = None,
    outer: str | Literal["family"] | None = "family",
    tool: str | None = None,
    surfaces: tuple[str, ...] = (),
    inferred: bool = False,
    note: str = "",
) -> NameMapping:
    if canonical is None and family is not None:
        canonical = f"{family}/{verb}" if verb else family
    outer_method = OUTER_METHOD.get(family or "") if outer == "family" else outer
    return NameMapping(
        name=name,
        known=True,
        kind=kind,
        family=family,
        verb=verb,
        operation=operation,
        canonical=canonical,
        legacy_alias=LEGACY_ROLE[family] if family else None,
        outer_method=outer_method,
        tool=tool,
        surfaces=surfaces,
        inferred=inferred,
        note=note,
    )


_NO_INSPECT_STRING = (
    "ASP defines no canonical inspect/* method string; the host serves the verb through "
    "host/queryInspect {verb: ...}."
)
_OPS_NOT_LISTED = (
    "host/capabilities reports the edit family, not which operations providers support."
)


def _roles() -> list[NameMapping]:
    return [
        _entry("sense", "legacy-role", "inspect", note="Legacy role name for the inspect family."),
        _entry("judge", "legacy-role", "check", note="Legacy role name for the check family."),
        _entry("act", "legacy-role", "edit", note="Legacy role name for the edit family."),
    ]


def _methods() -> list[NameMapping]:
    sense = [
        _entry(
            f"sense/{verb}",
            "legacy-method",
            "inspect",
            verb,
            note=_NO_INSPECT_STRING
            + (
                " The verb must be advertised in capabilities.inspect.query."
                if verb == "query"
                else ""
            ),
        )
        for verb in INSPECT_VERBS
    ]
    return [
        *sense,
        _entry(
            "judge/evaluate",
            "legacy-method",
            "check",
            "evaluate",
            note="Legacy shim of check/evaluate.",
        ),
        _entry(
            "judge/publishDiagnostics",
            "legacy-method",
            "check",
            "publishDiagnostics",
            outer=None,
            note=(
                "Watch-mode push notification (provider to host), never gating; only the legacy name "
                "exists and no outer-seam method delivers pushed diagnostics to a harness."
            ),
        ),
        _entry(
            "act/propose",
            "legacy-method",
            "edit",
            "propose",
            note="Legacy shim of edit/propose; operations rename|move|change-signature|multi-edit|"
            "organize-imports.",
        ),
    ]


# (surface, family, verb, operation, outer-method override, note)
_Surface = tuple[
    str, CapabilityFamily | None, str | None, str | None, str | Literal["family"] | None, str
]

_LANGUAGE_COVERAGE = (
    "Language coverage depends on the providers' diagnosticSources, not listed by "
    "host/capabilities."
)

_TOOL_SURFACES: dict[str, tuple[CapabilityFamily, str, tuple[_Surface, ...]]] = {
    "crg": (
        "inspect",
        "Legacy reference inspect (sense) graph tool.",
        (
            (
                "search",
                "inspect",
                "symbols",
                None,
                "family",
                "Symbol search maps to sense/symbols {query}.",
            ),
            ("impact", "inspect", "impact", None, "family", "Change impact maps to sense/impact."),
            (
                "watch",
                "inspect",
                "watch",
                None,
                None,
                "Index watching has no outer-seam method; the host answers inspect as of its baseline.",
            ),
            (
                "wal",
                "inspect",
                None,
                None,
                None,
                "Index write-ahead log: internal to crg, no ASP surface.",
            ),
            (
                "hot-query",
                "inspect",
                "query",
                None,
                "family",
                "Warm tool-specific queries map to sense/query.",
            ),
        ),
    ),
    "rox": (
        "check",
        "Legacy reference check (judge) tool.",
        (
            ("typescript", "check", "evaluate", None, "family", _LANGUAGE_COVERAGE),
            ("rust", "check", "evaluate", None, "family", _LANGUAGE_COVERAGE),
            (
                "custom-extension",
                "check",
                "evaluate",
                None,
                "family",
                "Custom rules become a third-party check provider enrolled behind the host.",
            ),
            (
                "daemon",
                "check",
                "evaluate",
                None,
                "family",
                "Warm processes are provider lifecycle the host supervises.",
            ),
            (
                "cache",
                "check",
                "evaluate",
                None,
                "family",
                "Caching is reported per Assessment (`cache`); the host keys it by blob set.",
            ),
        ),
    ),
    "cix": (
        "edit",
        "Legacy reference edit (act) tool.",
        (
            ("exact", "edit", "propose", "text-edit", "family", _OPS_NOT_LISTED),
            ("multi", "edit", "propose", "multi-edit", "family", _OPS_NOT_LISTED),
            ("search-replace", "edit", "propose", "text-edit", "family", _OPS_NOT_LISTED),
            ("patch", "edit", "propose", "text-edit", "family", _OPS_NOT_LISTED),
            ("tree", "edit", "propose", "replace-resource", "family", _OPS_NOT_LISTED),
            ("rename", "edit", "propose", "rename", "family", _OPS_NOT_LISTED),
            ("move", "edit", "propose", "move", "family", _OPS_NOT_LISTED),
            ("signature", "edit", "propose", "change-signature", "family", _OPS_NOT_LISTED),
            (
                "validation-before-write",
                "check",
                "evaluate",
                None,
                "family",
                "Validation before a write is a host decision on the after-state.",
            ),
            (
                "symbol-routes",
                "inspect",
                "symbols",
                None,
                "family",
                "CIX read-only symbol routes map to inspect.",
            ),
        ),
    ),
}


def _tools() -> list[NameMapping]:
    out: list[NameMapping] = []
    for tool, (family, note, surfaces) in _TOOL_SURFACES.items():
        names = tuple(f"{tool}:{s[0]}" for s in surfaces)
        out.append(_entry(tool, "legacy-tool", family, tool=tool, surfaces=names, note=note))
        for surface, s_family, verb, operation, outer, s_note in surfaces:
            canonical = None
            if s_family is not None and verb is not None:
                canonical = f"{s_family}/{verb}" + (f" ({operation})" if operation else "")
            out.append(
                _entry(
                    f"{tool}:{surface}",
                    "legacy-tool-surface",
                    s_family,
                    verb,
                    operation=operation,
                    canonical=canonical,
                    outer=outer,
                    tool=tool,
                    inferred=True,
                    note=s_note,
                )
            )
    return out


def _canonical() -> list[NameMapping]:
    out = [
        _entry(family, "canonical-family", family, note="Canonical capability family.")
        for family in CAPABILITY_FAMILIES
    ]
    out.append(_entry("check/evaluate", "canonical-method", "check", "evaluate"))
    out.append(_entry("edit/propose", "canonical-method", "edit", "propose"))
    out.extend(
        _entry(
            f"inspect/{verb}",
            "canonical-method",
            "inspect",
            verb,
            inferred=True,
            note=_NO_INSPECT_STRING,
        )
        for verb in INSPECT_VERBS
    )
    out.extend(
        _entry(method, "outer-method", fam, verb, outer=method, note="Host outer-seam method.")
        for fam, verb, method in _OUTER_ROWS
    )
    return out


_OUTER_ROWS: tuple[tuple[CapabilityFamily, str, str], ...] = (
    ("inspect", "query", "host/queryInspect"),
    ("check", "evaluate", "host/evaluateChangeset"),
    ("edit", "propose", "host/requestEditPlan"),
)


def _build_table() -> dict[str, NameMapping]:
    table: dict[str, NameMapping] = {}
    for entry in (*_roles(), *_methods(), *_tools(), *_canonical()):
        if entry.name in table:
            raise RuntimeError(f"duplicate legacy name {entry.name!r}")
        table[entry.name] = entry
    return table


NAME_TABLE: dict[str, NameMapping] = _build_table()
LEGACY_NAMES: tuple[str, ...] = tuple(
    name for name, entry in NAME_TABLE.items() if entry.kind.startswith("legacy-")
)
CANONICAL_NAMES: tuple[str, ...] = tuple(
    name for name, entry in NAME_TABLE.items() if not entry.kind.startswith("legacy-")
)
_FOLDED = {name.casefold(): name for name in NAME_TABLE}
MAX_NAME_LENGTH = 200


def _normalize(name: str) -> str:
    """Trim, fold case only where the protocol's names are unambiguous, and accept `tool/surface`."""
    text = name.strip()
    if text in NAME_TABLE:
        return text
    for sep in ("/", "."):
        head, found, tail = text.partition(sep)
        if found and head.casefold() in _TOOL_SURFACES:
            text = f"{head}:{tail}"
            break
    return _FOLDED.get(text.casefold(), text)


def map_name(name: str) -> NameMapping:
    """The mapping of one legacy or canonical name; unknown names come back with `known: false`."""
    key = _normalize(name)
    entry = NAME_TABLE.get(key)
    shown = name if len(name) <= MAX_NAME_LENGTH else name[:MAX_NAME_LENGTH] + "…"
    if entry is not None:
        return entry.model_copy(update={"requested": shown})
    return NameMapping(
        requested=shown,
        name=shown,
        known=False,
        kind="unknown",
        note="Not a legacy or canonical name the ASP protocol defines.",
    )


def map_names(names: list[str]) -> list[NameMapping]:
    """Map names in order, dropping exact duplicates."""
    seen: set[str] = set()
    out: list[NameMapping] = []
    for name in names:
        if name not in seen:
            seen.add(name)
            out.append(map_name(name))
    return out


#: The names the protocol itself defines (roles, methods, tools), without our tool-surface split.
PROTOCOL_LEGACY_NAMES: tuple[str, ...] = tuple(
    name for name in LEGACY_NAMES if NAME_TABLE[name].kind != "legacy-tool-surface"
)
