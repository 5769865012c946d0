"""Deeply nested real code in the Python check (reference_host/providers/deep.py): sympy's
`polys/numberfields/resolvent_lookup.py` made pyflakes exceed the default recursion limit, so the
file was never analysed and every sympy sweep was incomplete."""

from __future__ import annotations

import ast
import sys

import pytest
from pyflakes.checker import Checker

from reference_host.providers.python_rules import AnalysisFailed, analyse


def _chain(terms: int) -> bytes:
    return ("x = " + " + ".join(["y"] * terms) + "\n").encode()


def test_a_chain_too_deep_for_pyflakes_at_the_default_limit_is_analysed() -> None:
    source = _chain(700)
    with pytest.raises(RecursionError):
        Checker(ast.parse(source))  # what the check met on sympy
    found = analyse(source, None)
    assert len(found) == 700 and {f.message for f in found} == {"undefined name 'y'"}
    assert sys.getrecursionlimit() == 1000, "the deeper limit is given back"


def test_a_chain_past_every_limit_is_a_typed_failure_not_a_crash() -> None:
    """Before, the enclosing-symbol walk recursed too and raised RecursionError out of `analyse`."""
    with pytest.raises(AnalysisFailed, match="RecursionError"):
        analyse(_chain(20_000), None)
