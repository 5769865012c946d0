"""`# noqa` in the Python check (reference_host/providers/noqa.py) through the real provider."""

from __future__ import annotations

import pytest

from reference_host.providers.noqa import NOQA_CODES, silenced
from reference_host.providers.python_rules import ALL_RULES, analyse
from tests.providers.test_provider_python_check import codes, evaluate, started_check

pytestmark = pytest.mark.anyio
SOURCE = (
    "import os  # noqa: F401\n"
    "import sys  # noqa\n"
    "import json  # noqa: E501\n"
    "import re  # NOQA:F811,F401\n"
    "x = undefined  # noqa: F401\n"
    "y = missing  # noqa\n"
)


def test_noqa_silences_only_the_codes_it_names() -> None:
    lines = SOURCE.splitlines()
    found = {f.start[0]: silenced(f, lines) for f in analyse(SOURCE.encode(), None)}
    # os (F401 named), sys (bare), re (F401 in a list) silenced; json (other code) and
    # undefined (F821 not named) reported; bare noqa silences the undefined `missing` too
    assert found == {0: True, 1: True, 2: False, 3: True, 4: False, 5: True}
    assert set(NOQA_CODES) <= set(ALL_RULES)


@pytest.mark.needs_definitions
async def test_the_check_honours_noqa_unless_configured_not_to() -> None:
    async with started_check() as host:
        changeset = host.changeset({"src/app.py": SOURCE})
        honoured = await evaluate(host, changeset)
        assert sorted(codes(honoured)) == [
            ("src/app.py", "python/undefined-name"),
            ("src/app.py", "python/unused-import"),
        ]
        assert {d["location"]["range"]["start"]["line"] for d in honoured["diagnostics"]} == {2, 4}
        ignored = await evaluate(host, changeset, configuration={"honourNoqa": False})
        assert len(ignored["diagnostics"]) == 6
        assert ignored["provider"]["configDigest"] != honoured["provider"]["configDigest"]
