"""Renames on the patterns real packages use, where a plan that claims `complete` used to break
code: each case comes from applying a rename to a real package and running its tests.
"""

from __future__ import annotations

import pytest

from reference_host.providers.pyindex.rename import RenameResult
from tests.support.renamed import renamed

REEXPORT = {  # click 8.1: `click/__init__.py` re-exports `from .utils import echo as echo`
    "pkg/__init__.py": "from .utils import echo as echo\nfrom .utils import style\n",
    "pkg/utils.py": "def echo(m):\n    return m\n\n\ndef style(m):\n    return echo(m)\n",
    "pkg/termui.py": "from .utils import echo\n\n\ndef show(m):\n    echo(m)\n",
    "app.py": (
        "import pkg\nfrom pkg import echo\nfrom pkg import echo as shout\n\n"
        "pkg.echo(1)\necho(2)\nshout(3)\n"
    ),
}


def _rename(sources: dict[str, str], symbol: str, new: str) -> tuple[RenameResult, dict[str, str]]:
    return renamed(sources, symbol, new)


def test_a_name_reexported_as_itself_keeps_its_public_spelling() -> None:
    result, out = _rename(REEXPORT, "pkg.utils.echo", "say")
    assert result.refusal is None, result.detail
    assert out["pkg/utils.py"] == (
        "def say(m):\n    return m\n\n\ndef style(m):\n    return say(m)\n"
    )
    assert out["pkg/termui.py"] == "from .utils import say\n\n\ndef show(m):\n    say(m)\n"
    # the package still exports `echo`: its importers and `pkg.echo` stay as they are
    assert out["pkg/__init__.py"] == "from .utils import say as echo\nfrom .utils import style\n"
    assert out["app.py"] == REEXPORT["app.py"]


def test_the_public_name_of_a_plain_reexport_changes_with_it() -> None:
    result, out = _rename(REEXPORT, "pkg.utils.style", "paint")
    assert result.refusal is None, result.detail
    assert out["pkg/__init__.py"] == "from .utils import echo as echo\nfrom .utils import paint\n"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("def f():\n    return 1\n\n\nf = staticmethod(f)\nprint(f)\n", "line 5"),
        ("try:\n    from os import f\nexcept ImportError:\n    def f():\n        pass\n", "line 2"),
        ("def f():\n    pass\n\n\ndef g():\n    global f\n    f = 2\n", "global f"),
        (
            "class C:\n    @property\n    def f(self):\n        return 1\n\n"
            "    @f.setter\n    def f(self, v):\n        pass\n",
            "line 3",
        ),
        ("import pytest\n\n\n@pytest.fixture(scope='function')\ndef f():\n    pass\n", "@pytest"),
        ("import click\n\n\n@click.command()\ndef f():\n    pass\n", "@click.command"),
        ("from flask import Flask\napp = Flask('a')\n\n\n@app.route('/')\ndef f(): pass\n", "@app"),
    ],
)
def test_a_definition_bound_again_in_its_scope_is_not_renamed_silently(text: str, why: str) -> None:
    """`f = staticmethod(f)`: renaming only the `def` would leave `f` the decorated one and give
    the undecorated function the new name; so would a fallback, a `global`, a setter twin."""
    symbol = "m.py::C.f" if "class C" in text else "m.py::f"
    result, _ = _rename({"m.py": text}, symbol, "g2")
    assert result.refusal in ("unresolved", "ambiguous"), result
    if result.refusal == "unresolved":
        assert why in result.detail, result.detail


def test_a_decorator_given_an_explicit_name_does_not_block_a_rename() -> None:
    text = (
        "import click\nimport pytest\n\n\n@pytest.fixture(name='f')\n@click.command('f')\n"
        "@staticmethod\ndef f():\n    pass\n"
    )
    result, out = _rename({"m.py": text}, "m.f", "g")
    assert result.refusal is None, result.detail
    assert "def g():" in out["m.py"]


def test_other_bindings_of_the_name_elsewhere_do_not_block_a_rename() -> None:
    text = (
        "def f():\n    return 1\n\n\ndef g(f=None):\n    f = 2\n    return f\n\n\n"
        "class K:\n    f = 3\n\n\nprint(f(), [f for f in ()])\n"
    )
    result, out = _rename({"m.py": text}, "m.f", "h")
    assert result.refusal is None, result.detail
    assert out["m.py"].startswith("def h():") and "print(h(), [f for f in ()])" in out["m.py"]


def test_a_use_inside_an_f_string_is_renamed_in_place() -> None:
    """click's `f"<unopened file '{format_filename(self.name)}' {self.mode}>"`: the use is
    placed where the parser says and checked against the name written there."""
    sources = {
        "m.py": (
            "def fmt(x):\n    return x\n\n\n"
            "print(f\"<file '{fmt('a')}' {fmt('b')!r}>\", f'{ {fmt: 1}[fmt] }')\n"
        )
    }
    result, out = _rename(sources, "m.fmt", "show")
    assert result.refusal is None, result.detail
    assert out["m.py"].endswith(
        "print(f\"<file '{show('a')}' {show('b')!r}>\", f'{ {show: 1}[show] }')\n"
    )


@pytest.mark.parametrize(
    ("sources", "where"),
    [
        # a parameter named like the new name: `helper(value)` would become `value(value)`
        (
            {
                "m.py": "def helper(x):\n    return x\n\n\ndef use(value):\n    return helper(value)\n"
            },
            "m.py",
        ),
        # an importer's local of that name
        (
            {
                "m.py": "def helper(x):\n    return x\n",
                "app.py": "from m import helper\n\n\ndef run(value=1):\n    return helper(value)\n",
            },
            "app.py",
        ),
    ],
)
def test_a_new_name_a_use_would_read_as_a_local_is_refused(
    sources: dict[str, str], where: str
) -> None:
    result, _ = _rename(sources, "m.helper", "value")
    assert result.refusal == "invalid", result
    assert where in result.detail and "would read that value" in result.detail


@pytest.mark.parametrize("user", ["m.py", "app.py"])
def test_a_new_name_that_would_hide_a_builtin_in_use_is_refused(user: str) -> None:
    """Renaming `helper` to `len` where `len(...)` is called: the builtin would be shadowed."""
    sources = {"m.py": "def helper(x):\n    return x\n", "app.py": "from m import helper\n"}
    sources[user] += "\n\nprint(len('ab'), helper(1))\n"
    result, _ = _rename(sources, "m.helper", "len")
    assert result.refusal == "invalid", result
    assert f"{user}:" in result.detail and "hide" in result.detail
    sources[user] = sources[user].replace("len('ab')", "size('ab')")
    assert _rename(sources, "m.helper", "len")[0].refusal is None


def test_an_overload_set_is_renamed_together() -> None:
    """click's `Context.lookup_default` is two `@t.overload` stubs and the implementation: one
    name to the program, renamed as one (it was refused as bound again)."""
    text = (
        "import typing as t\n\n\nclass C:\n    @t.overload\n    def get(self, x: int) -> int: ...\n\n"
        "    @t.overload\n    def get(self, x: str) -> str: ...\n\n"
        "    def get(self, x):\n        return x\n\n\nprint(C().get(1))\n"
    )
    result, out = _rename({"m.py": text}, "m.py::C.get", "fetch")
    assert result.refusal is None, result.detail
    assert out["m.py"].count("def fetch(self, x") == 3 and "C().fetch(1)" in out["m.py"]
    assert "def get" not in out["m.py"]


BASES = (
    "import io\nimport requests\n\n\nclass Reader(io.RawIOBase):\n    def readinto(self, b):\n"
    "        return 0\n\n    def fill(self):\n        return self.readinto(b'')\n\n\n"
    "class Oops(ValueError):\n    def describe(self):\n        return self.describe\n\n\n"
    "class Session(requests.Session):\n    def tidy(self):\n        return self.tidy\n\n\n"
    "class File:\n    def __exit__(self, *a):\n        pass\n"
)


@pytest.mark.parametrize(
    ("symbol", "new", "refusal", "why"),
    [
        ("m.py::Reader.readinto", "read_into", "unresolved", "io.RawIOBase, which has readinto"),
        ("m.py::Reader.fill", "refill", None, ""),  # io.RawIOBase has no `fill`
        ("m.py::Oops.describe", "explain", None, ""),
        ("m.py::Session.tidy", "clean", "unresolved", "requests.Session, outside the workspace"),
        ("m.py::File.__exit__", "leave", "unresolved", "__exit__ is a name Python itself calls"),
        ("m.py::Oops.describe", "__str__", "invalid", "__str__ is a name Python itself calls"),
    ],
)
def test_a_method_a_base_outside_the_workspace_or_python_may_call_is_not_renamed(
    symbol: str, new: str, refusal: str | None, why: str
) -> None:
    """click's `LazyFile.__exit__` and `_FixupStream.__getattr__`, renamed, broke its tests;
    `_WindowsConsoleRawReader.readinto` is called by `io` under that name."""
    result, _ = _rename({"m.py": BASES}, symbol, new)
    assert result.refusal == refusal, result
    assert why in result.detail


ALIASED = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def compute(x):\n    return x\n\n\nrun = compute\n",
    "pkg/use.py": (
        "from pkg import core\nfrom pkg.core import compute, run\n\nalias = core.compute\n\n\n"
        "def go():\n    run(1)\n    alias(2)\n    return compute(3)\n"
    ),
}


def test_a_name_assigned_from_the_renamed_one_keeps_its_own_spelling() -> None:
    """`run = compute` is another name for the function (inspect now resolves `run()` to it);
    renaming `compute` rewrites the right-hand side, never the calls through `run`."""
    result, out = _rename(ALIASED, "pkg.core.compute", "calc")
    assert result.refusal is None, result.detail
    assert out["pkg/core.py"] == "def calc(x):\n    return x\n\n\nrun = calc\n"
    assert out["pkg/use.py"] == (
        "from pkg import core\nfrom pkg.core import calc, run\n\nalias = core.calc\n\n\n"
        "def go():\n    run(1)\n    alias(2)\n    return calc(3)\n"
    )
