"""Which old-tool rule ids mean the same thing as an ASP provider's namespaced code.

Old tools name pyflakes-class findings differently (pyflakes message classes, flake8/ruff `F` codes,
pylint symbols); the ASP Python check provider uses `python/<kind>` codes. Rules compare by *kind*
(the part after the namespace), so a provider with another namespace still lines up.
"""

from __future__ import annotations

import re
from typing import Literal

RuleHow = Literal["user-map", "namespaced", "table", "message", "unmapped"]


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


# pyflakes message class -> (flake8/ruff code, other old-tool aliases). The kind of each class is
# its kebab-cased name, the convention of the ASP Python check provider (`python/<kind>`), with
# the one rename that provider makes (RedefinedWhileUnused -> redefined-unused).
_PYFLAKES: dict[str, tuple[str, ...]] = {
    "UnusedImport": ("F401", "unused-import", "W0611"),
    "ImportShadowedByLoopVar": ("F402",),
    "ImportStarUsed": ("F403", "wildcard-import", "W0401"),
    "LateFutureImport": ("F404",),
    "ImportStarUsage": ("F405",),
    "ImportStarNotPermitted": ("F406",),
    "FutureFeatureNotDefined": ("F407",),
    "PercentFormatInvalidFormat": ("F501",),
    "PercentFormatExpectedMapping": ("F502",),
    "PercentFormatExpectedSequence": ("F503",),
    "PercentFormatExtraNamedArguments": ("F504",),
    "PercentFormatMissingArgument": ("F505",),
    "PercentFormatMixedPositionalAndNamed": ("F506",),
    "PercentFormatPositionalCountMismatch": ("F507",),
    "PercentFormatStarRequiresSequence": ("F508",),
    "PercentFormatUnsupportedFormatCharacter": ("F509",),
    "StringDotFormatInvalidFormat": ("F521",),
    "StringDotFormatExtraNamedArguments": ("F522",),
    "StringDotFormatExtraPositionalArguments": ("F523",),
    "StringDotFormatMissingArgument": ("F524",),
    "StringDotFormatMixingAutomatic": ("F525",),
    "FStringMissingPlaceholders": (
        "F541",
        "f-string-missing-placeholders",
        "f-string-without-interpolation",
    ),
    "TStringMissingPlaceholders": ("F542", "t-string-missing-placeholders"),
    "MultiValueRepeatedKeyLiteral": ("F601", "duplicate-key", "W0109"),
    "MultiValueRepeatedKeyVariable": ("F602",),
    "TooManyExpressionsInStarredAssignment": ("F621",),
    "TwoStarredExpressions": ("F622",),
    "AssertTuple": ("F631", "assert-on-tuple", "W0199"),
    "IsLiteral": ("F632", "literal-comparison", "R0123"),
    "InvalidPrintSyntax": ("F633",),
    "IfTuple": ("F634",),
    "BreakOutsideLoop": ("F701",),
    "ContinueOutsideLoop": ("F702", "not-in-loop", "E0103"),
    "YieldOutsideFunction": ("F704", "yield-outside-function", "E0105"),
    "ReturnOutsideFunction": ("F706", "return-outside-function", "E0104"),
    "DefaultExceptNotLast": ("F707", "bare-except-not-last"),
    "DoctestSyntaxError": ("F721",),
    "ForwardAnnotationSyntaxError": ("F722",),
    "RedefinedWhileUnused": ("F811", "redefined-while-unused"),
    "UndefinedName": ("F821", "undefined-variable", "E0602"),
    "UndefinedExport": ("F822", "undefined-all-variable", "E0603"),
    "UndefinedLocal": ("F823", "used-before-assignment", "E0601"),
    "UnusedIndirectAssignment": ("F824",),
    "DuplicateArgument": ("F831", "duplicate-argument-name", "E0108"),
    "UnusedVariable": ("F841", "unused-variable", "W0612"),
    "UnusedAnnotation": ("F842",),
    "RaiseNotImplemented": ("F901", "notimplemented-raised", "E0711"),
    "EagerUseOfLazyImport": (),
    "LazyImportStarNotPermitted": (),
    "LazyImportNotAtModuleScope": (),
}
_RENAMED = {"RedefinedWhileUnused": "redefined-unused"}
_OTHER_KINDS: dict[str, tuple[str, ...]] = {
    "syntax-error": ("SyntaxError", "E999", "E0001", "invalid-syntax"),
    "syntax-warning": ("SyntaxWarning",),
}


def pyflakes_kind(class_name: str) -> str:
    """The rule kind of a pyflakes message class, as the ASP Python check provider names it."""
    return _RENAMED.get(class_name, _kebab(class_name))


def _build_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for cls, aliases in _PYFLAKES.items():
        kind = pyflakes_kind(cls)
        for alias in (kind, cls, *aliases):
            table[alias.casefold()] = kind
    for kind, aliases in _OTHER_KINDS.items():
        for alias in (kind, *aliases):
            table[alias.casefold()] = kind
    return table


RULE_TABLE: dict[str, str] = _build_table()

# For old tools whose rule id says nothing (e.g. every result ruleId "pyflakes"): pyflakes' own texts.
_MESSAGE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), kind)
    for pattern, kind in (
        (r"imported but unused", "unused-import"),
        (r"^undefined name .* in __all__", "undefined-export"),
        (r"^undefined name ", "undefined-name"),
        (r"^redefinition of unused ", "redefined-unused"),
        (r"is assigned to but never used", "unused-variable"),
        (r"is annotated but never used", "unused-annotation"),
        (r"referenced before assignment", "undefined-local"),
        (r"may be undefined, or defined from star imports", "import-star-usage"),
        (r"import \*' used; unable to detect undefined names", "import-star-used"),
        (r"duplicate argument ", "duplicate-argument"),
        (r"f-string is missing placeholders", "fstring-missing-placeholders"),
        (r"^(invalid syntax|syntax error|unexpected indent|expected )", "syntax-error"),
    )
)


def code_kind(code: str) -> str:
    """The kind of a namespaced ASP code: `python/unused-import` -> `unused-import`."""
    return code.split("/", 1)[1] if "/" in code else code


def old_rule_kind(
    rule: str, message: str = "", rule_map: dict[str, str] | None = None
) -> tuple[str | None, RuleHow]:
    """The kind an old tool's rule id (or, failing that, its message) stands for, and how we know."""
    if rule_map and rule in rule_map:
        return code_kind(rule_map[rule]), "user-map"
    folded = rule.casefold()
    if folded in RULE_TABLE:
        return RULE_TABLE[folded], "table"
    if "/" in rule:
        tail = folded.rsplit("/", 1)[-1]
        if tail in RULE_TABLE:
            return RULE_TABLE[tail], "namespaced" if RULE_TABLE[tail] == tail else "table"
        return code_kind(rule), "namespaced"
    for pattern, kind in _MESSAGE_PATTERNS:
        if pattern.search(message):
            return kind, "message"
    return None, "unmapped"


_QUOTED = re.compile(r"'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"")


def message_subject(message: str) -> str | None:
    """The first quoted name in a message (`'os' imported but unused` -> `os`): a position-free key."""
    found = _QUOTED.search(message)
    if found is None:
        return None
    return found.group(1) if found.group(1) is not None else found.group(2)


def asp_rule_kind(code: str) -> str:
    """The kind of an ASP provider's code, folded through the same alias table as old rules."""
    kind = code_kind(code)
    return RULE_TABLE.get(kind.casefold(), kind)
