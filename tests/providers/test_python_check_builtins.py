"""Builtins a project declares for its linters (reference_host/providers/lint_builtins.py): Salt's
loader injects `__salt__`, `__opts__`, ... into its modules, and a sweep of Salt 3008.5 drew
8,064 `undefined name` errors (every change denied); with its pylint `additional-builtins` 119
are left, all real to pyflakes."""

from __future__ import annotations

import pytest

from reference_host.providers.lint_builtins import declared, undefined_name
from tests.providers.test_provider_python_check import codes, evaluate, started_check

pytestmark = pytest.mark.anyio
MODULE = "def run():\n    return __salt__['cmd.run'](__opts__) + missing\n"


@pytest.mark.parametrize("filename, text", [
    (".flake8", "[flake8]\nbuiltins = __salt__,\n  __opts__\n"),
    ("setup.cfg", "[metadata]\nname = x\n[flake8]\nbuiltins=__salt__ __opts__\n"),
    ("tox.ini", "[flake8]\nbuiltins = __salt__, __opts__\n"),
    (".pylintrc", "[VARIABLES]\nadditional-builtins=__salt__,__opts__\n"),
    ("pyproject.toml", '[tool.ruff]\nbuiltins = ["__salt__", "__opts__"]\n'),
    ("pyproject.toml", '[tool.pylint.variables]\nadditional-builtins = ["__salt__", "__opts__"]\n'),
    ("ruff.toml", 'builtins = ["__salt__", "__opts__"]\n'),
])  # fmt: skip
def test_each_linter_declaration_is_read(filename: str, text: str) -> None:
    assert declared(filename, text.encode()) == {"__salt__", "__opts__"}


def test_unreadable_declarations_declare_nothing() -> None:
    assert declared("setup.cfg", b"[flake8\nbuiltins = x\n") == set()
    assert declared("pyproject.toml", b"[tool.ruff\n") == set()
    assert declared(".flake8", b"\xff\xfe") == set()
    assert declared("pyproject.toml", b'[tool]\nruff = "builtins"\n') == set()
    assert declared(".flake8", b"[flake8]\nbuiltins = ok, not-a-name, 1x\n") == {"ok"}
    assert undefined_name("undefined name '__salt__'") == "__salt__"


@pytest.mark.needs_definitions
async def test_the_project_declaration_and_the_setting_define_names() -> None:
    files = {"setup.cfg": "[flake8]\nbuiltins = __salt__,__opts__\n", "salt/a.py": "A = 1\n"}
    async with started_check(files) as host:
        changeset = host.changeset({"salt/mod.py": MODULE})
        honoured = await evaluate(host, changeset)
        assert [d["message"] for d in honoured["diagnostics"]] == ["undefined name 'missing'"]
        ignored = await evaluate(host, changeset, configuration={"projectBuiltins": False})
        assert len(ignored["diagnostics"]) == 3
        both = await evaluate(
            host, changeset, configuration={"projectBuiltins": False, "builtins": ["missing"]}
        )
        assert sorted(d["message"] for d in both["diagnostics"]) == [
            "undefined name '__opts__'",
            "undefined name '__salt__'",
        ]


@pytest.mark.needs_definitions
async def test_nothing_more_is_read_when_no_name_is_undefined() -> None:
    async with started_check({"setup.cfg": "[flake8]\nbuiltins = x\n"}) as host:
        assessment = await evaluate(host, host.changeset({"ok.py": "import os\n"}))
        assert codes(assessment) == [("ok.py", "python/unused-import")]
        assert host.tree_calls == [], "no listing for a change with no undefined name"
