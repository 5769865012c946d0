"""Which old-tool rule ids mean the same thing as an ASP provider's namespaced code.

Old tools name pyflakes-class findings differently (pyflakes message classes, flake8/ruff `F` codes,
pylint symbols); the ASP Python check provider uses `python/<kind>` codes. Rules compare by *kind*
(the part after the namespace), so a provider with another namespace still lines up.
"""

from __future__ import annotations

import re
from typing import Literal

RuleHow = Literal["user-map", "namespaced", "table", "message", "unmapped"]

# kind -> aliases old tools use for it (pyflakes class, flake8/ruff code, pylint symbol, ...)
_KIND_ALIASES: dict[str, tuple[str, ...]] = {
    "syntax-error": ("SyntaxError", "E999", "syntax-error", "E0001", "invalid-syntax"),
    "undefined-name": ("UndefinedName", "F821", "undefined-variable", "E0602"),
    "unused-import": ("UnusedImport", "F401", "unused-import", "W0611"),
    "redefined-unused": ("RedefinedWhileUnused", "F811", "redefined-while-unused"),
    "unused-variable": ("UnusedVariable", "F841", "unused-variable", "W0612"),
    "unused-annotation": ("UnusedAnnotation", "F842"),
    "undefined-local": ("UndefinedLocal", "F823", "used-before-assignment", "E0601"),
    "undefined-export": ("UndefinedExport", "F822", "undefined-all-variable", "E0603"),
    "import-star-used": ("ImportStarUsed", "F403", "wildcard-import", "W0401"),
    "import-star-usage": ("ImportStarUsage", "F405"),
    "import-star-not-permitted": ("ImportStarNotPermitted", "F406"),
    "import-shadowed-by-loop-var": ("ImportShadowedByLoopVar", "F402"),
    "late-future-import": ("LateFutureImport", "F404"),
    "future-feature-not-defined": ("FutureFeatureNotDefined", "F407"),
    "duplicate-argument": ("DuplicateArgument", "F831", "duplicate-argument-name", "E0108"),
    "repeated-dict-key": (
        "MultiValueRepeatedKeyLiteral",
        "MultiValueRepeatedKeyVariable",
        "F601",
        "F602",
        "duplicate-key",
        "W0109",
    ),
    "return-outside-function": (
        "ReturnOutsideFunction",
        "F706",
        "return-outside-function",
        "E0104",
    ),
    "yield-outside-function": ("YieldOutsideFunction", "F704", "yield-outside-function", "E0105"),
    "continue-outside-loop": ("ContinueOutsideLoop", "F702", "not-in-loop", "E0103"),
    "break-outside-loop": ("BreakOutsideLoop", "F701"),
    "default-except-not-last": ("DefaultExceptNotLast", "F707", "bare-except-not-last"),
    "two-starred-expressions": ("TwoStarredExpressions", "F622"),
    "too-many-starred-expressions": ("TooManyExpressionsInStarredAssignment", "F621"),
    "if-tuple": ("IfTuple", "F634"),
    "assert-tuple": ("AssertTuple", "F631", "assert-on-tuple", "W0199"),
    "forward-annotation-syntax-error": ("ForwardAnnotationSyntaxError", "F722"),
    "raise-not-implemented": ("RaiseNotImplemented", "F901", "notimplemented-raised", "E0711"),
    "invalid-print-syntax": ("InvalidPrintSyntax", "F633"),
    "is-literal": ("IsLiteral", "F632", "literal-comparison", "R0123"),
    "f-string-missing-placeholders": (
        "FStringMissingPlaceholders",
        "F541",
        "f-string-without-interpolation",
    ),
    "t-string-missing-placeholders": ("TStringMissingPlaceholders",),
    "doctest-syntax-error": ("DoctestSyntaxError",),
    "string-format": (
        "StringDotFormatExtraPositionalArguments",
        "StringDotFormatExtraNamedArguments",
        "StringDotFormatMissingArgument",
        "StringDotFormatMixingAutomatic",
        "StringDotFormatInvalidFormat",
        "F521",
        "F522",
        "F523",
        "F524",
        "F525",
    ),
    "percent-format": (
        "PercentFormatInvalidFormat",
        "PercentFormatMixedPositionalAndNamed",
        "PercentFormatUnsupportedFormatCharacter",
        "PercentFormatPositionalCountMismatch",
        "PercentFormatExtraNamedArguments",
        "PercentFormatMissingArgument",
        "PercentFormatExpectedMapping",
        "PercentFormatExpectedSequence",
        "PercentFormatStarRequiresSequence",
        "F501",
        "F502",
        "F503",
        "F504",
        "F505",
        "F506",
        "F507",
        "F508",
        "F509",
    ),
}

RULE_TABLE: dict[str, str] = {
    alias.casefold(): kind for kind, aliases in _KIND_ALIASES.items() for alias in (kind, *aliases)
}

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
        (r"f-string is missing placeholders", "f-string-missing-placeholders"),
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
