"""Python scripts without a `.py` name are checked (reference_host/providers/check_scripts.py).

Before, a change to `bin/tool` starting `#!/usr/bin/env python3` was a path no provider covers:
`indeterminate` even with an undefined name in it, and `allow` never possible. Real host
subprocess over real git work trees, the built-in default policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_host.providers.check_scripts import may_be_script, runs_python
from tests.support.change_eval import evaluate_edit, findings_of

FILES = {"pkg/__init__.py": "", "bin/tool": "#!/usr/bin/env python3\nprint('ok')\n"}


@pytest.mark.parametrize(
    ("first", "python"),
    [
        (b"#!/usr/bin/env python3\n", True),
        (b"#!/usr/bin/python3.12 -u\r\n", True),
        (b"#! /usr/bin/env -S python3 -X dev\n", True),
        (b"#!/opt/python/bin/python\n", True),
        (b"#!/bin/sh\n", False),
        (b"#!/usr/bin/env pythonista\n", False),
        (b"# python script\n", False),
        (b"import os\n", False),
    ],
)
def test_a_shebang_that_runs_python_is_told_from_the_others(first: bytes, python: bool) -> None:
    assert runs_python(first + b"x = 1\n") is python


def test_only_paths_without_a_suffix_may_be_scripts() -> None:
    assert may_be_script("bin/deploy") and may_be_script("manage")
    assert not may_be_script("notes.txt") and not may_be_script("bin/.envrc")


def test_a_python_script_is_checked_like_a_module(tmp_path: Path) -> None:
    broken = "#!/usr/bin/env python3\nprint(undefined_name)\n"
    result = evaluate_edit(tmp_path, FILES, {"bin/tool": broken}, comparison=None)
    assert result["decision"] == "deny"
    assert [(p, line) for p, line, _ in findings_of(result, "python/undefined-name")] == [
        ("bin/tool", 1)
    ]
    clean = evaluate_edit(tmp_path / "clean", FILES, {"bin/tool": FILES["bin/tool"] + "x = 1\n"})
    assert clean["decision"] == "allow" and clean["coverage"]["exhaustive"] is True


def test_a_shell_script_is_still_a_path_nothing_checks(tmp_path: Path) -> None:
    files = {**FILES, "bin/run": "#!/bin/sh\necho hi\n"}
    result = evaluate_edit(tmp_path, files, {"bin/run": "#!/bin/sh\necho bye\n"}, comparison=None)
    assert result["decision"] == "indeterminate"
    assert any(d.get("source") == "bin/run" for d in result["coverage"]["degraded"])
