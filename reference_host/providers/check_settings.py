"""The settings of `asp-python-check`: the closed schema its request `configuration` is validated
against (configuration.py), with what each one changes."""

from __future__ import annotations

from reference_host.providers.configuration import Setting
from reference_host.providers.grammar import VERSION_SETTING
from reference_host.providers.python_rules import ALL_RULES

CONFIGURATION = {
    # `python/too-many-parameters` above this many parameters (off when unset)
    "verify": Setting("object", children={"maxParameters": Setting("int", minimum=1)}),
    "disabledRules": Setting("str-set", choices=frozenset(ALL_RULES)),
    "maxFileBytes": Setting("int", default=2_000_000, minimum=1),
    # a noqa comment (bare, or naming codes) silences the findings it names (noqa.py)
    "honourNoqa": Setting("bool", default=True),
    # "3.N": the Python the code is written for (grammar.py); unset: pyproject.toml, construct
    "targetVersion": Setting("str", pattern=VERSION_SETTING),
    # names defined everywhere, as flake8's `builtins` (lint_builtins.py)
    "builtins": Setting("str-set"),
    # also the builtins the repository's flake8 / ruff / pylint configuration declares
    "projectBuiltins": Setting("bool", default=True),
}
