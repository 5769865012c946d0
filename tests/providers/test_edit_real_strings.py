"""A rename and the name spelled in strings, as real packages spell it: forward references are
renamed in place (click's `t.Type["HelpFormatter"]` was left behind: the gate then found an
undefined name), and a dotted path or getattr string makes the plan incomplete (Django's
`PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]`: the plan was
`complete`, applied, compiled, and 21 tests failed).
"""

from __future__ import annotations

import pytest

from tests.support.renamed import planned, provider_plan

LIB = {
    "pkg/__init__.py": "",
    "pkg/fmt.py": (
        "import typing as t\n\n\nclass Formatter:\n    pass\n\n\n"
        "def make() -> 'Formatter':\n    return Formatter()\n"
    ),
    "pkg/core.py": (
        "import typing as t\nfrom typing import Optional, TypeVar, cast\n\n"
        "import pkg.fmt\nfrom pkg.fmt import Formatter\n\n"
        "T = TypeVar('T', bound='Formatter')\n\n\n"
        'class Command:\n    formatter_class: t.Type["Formatter"] = Formatter\n'
        "    other: 'pkg.fmt.Formatter'\n\n"
        '    def use(self, f: "Optional[Formatter]") -> None:\n'
        "        g = cast('Formatter', f)\n        print(g, 'Formatter is the default')\n"
    ),
}


@pytest.mark.anyio
async def test_forward_references_are_renamed_with_the_definition() -> None:
    plan = await provider_plan(LIB, "rename", symbol="pkg.fmt.Formatter", newName="Writer")
    assert plan["status"] == "complete", plan
    out = planned(LIB, plan)
    assert "def make() -> 'Writer':" in out["pkg/fmt.py"]
    core = out["pkg/core.py"]
    for spelled in (
        "T = TypeVar('T', bound='Writer')",
        'formatter_class: t.Type["Writer"] = Writer',
        "other: 'pkg.fmt.Writer'",
        'def use(self, f: "Optional[Writer]") -> None:',
        "g = cast('Writer', f)",
        "'Formatter is the default'",  # prose is not a reference
    ):
        assert spelled in core, core
    for text in out.values():
        compile(text, "<renamed>", "exec")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("extra", "line"),
    [
        ("SETTINGS = {'FORMATTER': 'pkg.fmt.Formatter'}\n", 1),
        ("import pkg.fmt\n\nkind = getattr(pkg.fmt, 'Formatter')\n", 3),
        ("from unittest import mock\n\n\n@mock.patch('pkg.fmt.Formatter')\ndef t(m): pass\n", 4),
        ("ENTRY = 'pkg.fmt:Formatter'\n", 1),
        ('def f():\n    """\n    >>> Formatter()\n    """\n', 2),
        ('def f():\n    """\n    >>> import pkg.fmt\n    >>> pkg.fmt.Formatter()\n    """\n', 2),
    ],
)
async def test_other_strings_that_spell_the_name_make_the_rename_incomplete(
    extra: str, line: int
) -> None:
    """Even in a file whose code never uses the name (the index would not have read it)."""
    sources = {**LIB, "conf.py": extra}
    plan = await provider_plan(sources, "rename", symbol="pkg.fmt.Formatter", newName="Writer")
    assert plan["status"] == "incomplete", plan
    detail = plan["incomplete"]["detail"]
    assert plan["incomplete"]["reason"] == "unresolved-reference"
    assert f"conf.py:{line}" in detail and "string" in detail, detail


@pytest.mark.anyio
async def test_a_parametrize_argument_name_is_not_a_reference() -> None:
    """click's tests parametrize an `echo` flag: `@pytest.mark.parametrize("echo", ...)`."""
    test = "import pytest\n\n\n@pytest.mark.parametrize('Formatter', [1])\ndef t(Formatter): pass\n"
    plan = await provider_plan(
        {**LIB, "t.py": test}, "rename", symbol="pkg.fmt.Formatter", newName="W"
    )
    assert plan["status"] == "complete", plan


@pytest.mark.anyio
async def test_a_forward_reference_to_another_definition_of_the_name_stays() -> None:
    sources = {
        **LIB,
        "other.py": "class Formatter:\n    pass\n\n\ndef g(x: 'Formatter') -> None:\n    pass\n",
    }
    plan = await provider_plan(sources, "rename", symbol="pkg.fmt.Formatter", newName="Writer")
    assert plan["status"] == "complete", plan
    assert "other.py" not in {c["path"] for c in plan["workspaceEdit"]["documentChanges"]}


@pytest.mark.anyio
async def test_a_type_stub_that_spells_the_name_makes_the_rename_incomplete() -> None:
    """attrs ships `validators.pyi` beside `validators.py`: renaming `instance_of` edited the
    module and its users but not the stub, and mypy then found 15 errors in attrs' typing tests."""
    stub = {"pkg/fmt.pyi": "class Formatter: ...\ndef make() -> Formatter: ...\n"}
    plan = await provider_plan({**LIB, **stub}, "rename", symbol="pkg.fmt.Formatter", newName="W")
    assert plan["status"] == "incomplete", plan
    assert "type stub" in plan["incomplete"]["detail"]
    assert "pkg/fmt.pyi" in plan["incomplete"]["detail"]
    other = {"pkg/other.pyi": "def unrelated() -> int: ...\n"}
    plan = await provider_plan({**LIB, **other}, "rename", symbol="pkg.fmt.Formatter", newName="W")
    assert plan["status"] == "complete", plan


@pytest.mark.anyio
@pytest.mark.parametrize(
    "extra",
    [
        "import pkg.fmt\n\nold = pkg.fmt.make\npkg.fmt.make = lambda: None\n",
        "import pkg.fmt\n\ndel pkg.fmt.make\n",
    ],
)
async def test_an_attribute_assigned_under_the_name_makes_the_rename_incomplete(extra: str) -> None:
    """click's CliRunner patches `_compat.should_strip_ansi = ...`: renamed, the patch set a
    name nobody read any more and a test failed."""
    sources = {**LIB, "patch.py": extra}
    plan = await provider_plan(sources, "rename", symbol="pkg.fmt.make", newName="build")
    assert plan["status"] == "incomplete", plan
    assert "patch.py:" in plan["incomplete"]["detail"]
    assert "assign an attribute" in plan["incomplete"]["detail"]


@pytest.mark.anyio
async def test_a_doctest_spelling_the_name_only_in_a_string_or_comment_does_not_use_it() -> None:
    """httpx's `request` docstring: `>>> httpx.request('GET', 'https://httpbin.org/get')` made
    every rename of its `get` function incomplete."""
    doc = (
        'def f():\n    """\n    >>> f(\'https://host/Formatter\', "Formatter\'s")  # Formatter\n'
        '    """\n'
    )
    plan = await provider_plan(
        {**LIB, "doc.py": doc}, "rename", symbol="pkg.fmt.Formatter", newName="Writer"
    )
    assert plan["status"] == "complete", plan


@pytest.mark.anyio
async def test_a_type_alias_string_is_renamed_and_a_literal_value_is_not() -> None:
    """httpx's `TimeoutTypes = Union[..., "Timeout"]` refused renaming Timeout (the alias was not
    read as a type); a `Literal['make']` value is data, never a reference to rename."""
    alias = "from typing import Union\n\nimport pkg.fmt\n\nT = Union[int, 'pkg.fmt.Formatter']\n"
    plan = await provider_plan(
        {**LIB, "alias.py": alias}, "rename", symbol="pkg.fmt.Formatter", newName="Writer"
    )
    assert plan["status"] == "complete", plan
    assert (
        "T = Union[int, 'pkg.fmt.Writer']" in planned({**LIB, "alias.py": alias}, plan)["alias.py"]
    )
    literal = (
        "from typing import Literal\n\nfrom pkg.fmt import make\n\n\n"
        "def pick(k: Literal['make']) -> None:\n    make()\n"
    )
    plan = await provider_plan(
        {**LIB, "lit.py": literal}, "rename", symbol="pkg.fmt.make", newName="build"
    )
    assert plan["status"] == "incomplete", plan
    assert "lit.py:6" in plan["incomplete"]["detail"]


@pytest.mark.anyio
async def test_a_doctest_attribute_counts_when_it_may_be_the_definition() -> None:
    """httpx's `Client` docstring: `>>> response = client.get(...)` is a method of another object,
    not the module function `get`; `>>> pkg.fmt.make()` is the function itself."""
    doc = 'def f():\n    """\n    >>> thing.make()\n    """\n'
    plan = await provider_plan({**LIB, "d.py": doc}, "rename", symbol="pkg.fmt.make", newName="b")
    assert plan["status"] == "complete", plan
    doc = 'def f():\n    """\n    >>> pkg.fmt.make()\n    """\n'
    plan = await provider_plan({**LIB, "d.py": doc}, "rename", symbol="pkg.fmt.make", newName="b")
    assert plan["status"] == "incomplete" and "d.py:2" in plan["incomplete"]["detail"], plan


@pytest.mark.anyio
async def test_a_string_showing_a_class_repr_makes_its_rename_incomplete() -> None:
    """httpx's Timeout builds its repr from `self.__class__.__name__` and a test expects
    `"Timeout(timeout=5.0)"`: renamed, the plan was complete and that test failed."""
    test = "from pkg.fmt import Formatter\n\nassert repr(Formatter()) == 'Formatter(width=1)'\n"
    sources = {**LIB, "t.py": test}
    plan = await provider_plan(sources, "rename", symbol="pkg.fmt.Formatter", newName="Writer")
    assert plan["status"] == "incomplete" and "t.py:3" in plan["incomplete"]["detail"], plan
    plan = await provider_plan(sources, "rename", symbol="pkg.fmt.make", newName="build")
    assert plan["status"] == "complete", plan  # a function's name is not in a repr
