"""`# noqa` and `# noqa: CODE` for the Python check: the flake8 / ruff codes its rules map to.

A finding whose first line carries a bare `# noqa`, or a `# noqa:` list naming the rule's code,
is not reported, as flake8 and ruff users expect. Only rules with a code below can be silenced
this way (a syntax error never is); the `honourNoqa` setting (default true) turns this off.
"""

from __future__ import annotations

import re

from reference_host.providers.python_rules import SOURCE, TOO_MANY_PARAMETERS, RawFinding

_PYFLAKES_CODES = {
    "unused-import": "F401",
    "import-shadowed-by-loop-var": "F402",
    "import-star-used": "F403",
    "late-future-import": "F404",
    "import-star-usage": "F405",
    "import-star-not-permitted": "F406",
    "future-feature-not-defined": "F407",
    "percent-format-invalid-format": "F501",
    "percent-format-expected-mapping": "F502",
    "percent-format-expected-sequence": "F503",
    "percent-format-extra-named-arguments": "F504",
    "percent-format-missing-argument": "F505",
    "percent-format-mixed-positional-and-named": "F506",
    "percent-format-positional-count-mismatch": "F507",
    "percent-format-star-requires-sequence": "F508",
    "percent-format-unsupported-format-character": "F509",
    "string-dot-format-invalid-format": "F521",
    "string-dot-format-extra-named-arguments": "F522",
    "string-dot-format-extra-positional-arguments": "F523",
    "string-dot-format-missing-argument": "F524",
    "string-dot-format-mixing-automatic": "F525",
    "fstring-missing-placeholders": "F541",
    "multi-value-repeated-key-literal": "F601",
    "multi-value-repeated-key-variable": "F602",
    "too-many-expressions-in-starred-assignment": "F621",
    "two-starred-expressions": "F622",
    "assert-tuple": "F631",
    "is-literal": "F632",
    "invalid-print-syntax": "F633",
    "if-tuple": "F634",
    "break-outside-loop": "F701",
    "continue-outside-loop": "F702",
    "yield-outside-function": "F704",
    "return-outside-function": "F706",
    "default-except-not-last": "F707",
    "doctest-syntax-error": "F721",
    "forward-annotation-syntax-error": "F722",
    "redefined-unused": "F811",
    "undefined-name": "F821",
    "undefined-export": "F822",
    "undefined-local": "F823",
    "duplicate-argument": "F831",
    "unused-variable": "F841",
    "unused-annotation": "F842",
    "raise-not-implemented": "F901",
}
#: rule code -> the flake8 / ruff code by which a suppression comment names it
NOQA_CODES: dict[str, str] = {f"{SOURCE}/{k}": v for k, v in _PYFLAKES_CODES.items()}
NOQA_CODES[TOO_MANY_PARAMETERS] = "PLR0913"
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


def silenced(finding: RawFinding, lines: list[str]) -> bool:
    """True when the finding's first line has a `# noqa` that covers its code."""
    code = NOQA_CODES.get(finding.code)
    row = finding.start[0]
    if code is None or not 0 <= row < len(lines):
        return False
    for match in _NOQA.finditer(lines[row]):
        listed = match.group("codes")
        if listed is None:
            return True
        if code in {c.upper() for c in re.split(r"[\s,]+", listed.strip())}:
            return True
    return False


def honour_noqa(findings: list[RawFinding], data: bytes) -> list[RawFinding]:
    """*findings* without the ones a `# noqa` comment on their line silences."""
    if b"noqa" not in data and b"NOQA" not in data:
        return findings
    lines = data.decode("utf-8", errors="replace").splitlines()
    return [f for f in findings if not silenced(f, lines)]
