"""Builtins a project declares for its linters (reference_host/providers/lint_builtins.py): Salt's
loader injects `__salt__`, `__opts__`, ... into its modules, and a sweep of Salt 3008.5 drew
8,064 `undefined name` errors (every change denied); with its pylint `additional-builtins` 119
are left, all real to pyflakes."""

from __future__ import annotations

import pytest

from reference_host.providers.lint_builtins import declared, installed, undefined_name
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


SALT_INIT = (
    "def __define_global_system_encoding_variable__():\n"
    "    import builtins\n"
    "    import sys\n"
    '    setattr(builtins, "__salt_system_encoding__", sys.getdefaultencoding())\n'
    "\n\n__define_global_system_encoding_variable__()\n"
)


@pytest.mark.parametrize("source, names", [
    (SALT_INIT, {"__salt_system_encoding__"}),
    ("import builtins as b\nb.VERSION = 1\nb.__dict__['x'] = 2\n", {"VERSION"}),
    ("__builtins__['_'] = str\n", {"_"}),
    ("import __builtin__\n__builtin__.unicode = str\n", {"unicode"}),
    ("from six.moves import builtins\nsetattr(builtins, 'long', int)\n", {"long"}),
    ("import gettext\ngettext.install('app', names=['ngettext'])\n", {"_", "ngettext"}),
    # not builtins: another object, a computed name, a local that only shares the name
    ("import os\nsetattr(os, 'X', 1)\nsetattr(builtins, name, 1)\n", set()),
    ("def f(builtins):\n    builtins.Y = 1\n", set()),
    ("def broken(:\n", set()),
])  # fmt: skip
def test_names_a_package_installs_into_builtins_are_found(source: str, names: set[str]) -> None:
    assert installed(source.encode()) == names


@pytest.mark.needs_definitions
async def test_a_name_the_package_installs_into_builtins_is_defined() -> None:
    """Salt 3008.5's sdist (no lint configuration): `salt/__init__.py` installs
    `__salt_system_encoding__` into builtins, and a change to salt/utils/files.py was denied on
    its three uses there."""
    use = "def enc():\n    return __salt_system_encoding__ + missing\n"
    files = {"salt/__init__.py": SALT_INIT, "salt/utils/__init__.py": "", "deep/a/__init__.py": ""}
    async with started_check(files) as host:
        changeset = host.changeset({"salt/utils/files.py": use})
        honoured = await evaluate(host, changeset)
        assert [d["message"] for d in honoured["diagnostics"]] == ["undefined name 'missing'"]
        ignored = await evaluate(host, changeset, configuration={"projectBuiltins": False})
        assert len(ignored["diagnostics"]) == 2
        # a package __init__ the change itself edits counts as it will be
        edited = host.changeset({"salt/__init__.py": "", "salt/utils/files.py": use})
        assert len((await evaluate(host, edited))["diagnostics"]) == 2
