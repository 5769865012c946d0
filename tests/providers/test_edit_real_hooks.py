"""Renames of names a framework calls by name, found by applying renames to pytest 8.3.5 and
running its tests: a `pytest_*` function is a hook implementation whether or not it is decorated,
and a plan that renames it silently unplugs it."""

from __future__ import annotations

import pytest

from tests.support.renamed import renamed

PLUGIN = {  # pytest's src/_pytest/stepwise.py, in short
    "pkg/stepwise.py": (
        "def pytest_addoption(parser):\n    parser.addoption('--sw')\n\n\n"
        "def pytest_sessionfinish(session):\n    session.done = True\n\n\n"
        "class StepwisePlugin:\n    def pytest_collection_modifyitems(self, items):\n"
        "        items.sort()\n\n    def helper(self):\n        return 1\n\n\n"
        "def plain():\n    return StepwisePlugin().helper()\n"
    ),
    "conftest.py": "def pytest_configure(config):\n    config.x = 1\n",
}


@pytest.mark.parametrize(
    ("symbol", "line"),
    [
        ("pkg/stepwise.py::pytest_sessionfinish", "pkg/stepwise.py:5"),
        ("pkg/stepwise.py::StepwisePlugin.pytest_collection_modifyitems", "pkg/stepwise.py:10"),
        ("conftest.py::pytest_configure", "conftest.py:1"),
    ],
)
def test_a_hook_implementation_is_never_renamed_complete(symbol: str, line: str) -> None:
    """pluggy finds `pytest_*` functions and methods of a plugin or conftest by their name."""
    for new in ("finished", "pytest_finished"):
        result, _ = renamed(PLUGIN, symbol, new)
        assert result.refusal == "unresolved", result
        assert "pytest hook name" in result.detail and line in result.detail, result.detail


def test_nothing_is_renamed_to_a_hook_name() -> None:
    result, _ = renamed(PLUGIN, "pkg/stepwise.py::plain", "pytest_plain")
    assert result.refusal == "invalid", result
    assert "pytest_plain" in result.detail


def test_an_ordinary_function_and_method_of_a_plugin_still_rename() -> None:
    result, out = renamed(PLUGIN, "pkg/stepwise.py::StepwisePlugin.helper", "assist")
    assert result.refusal is None, result.detail
    assert "def assist(self):" in out["pkg/stepwise.py"]
    assert "StepwisePlugin().assist()" in out["pkg/stepwise.py"]


NAMED = {  # httpx 0.28's _urlparse.ParseResult
    "m.py": (
        "import typing\nfrom typing import NamedTuple\n\n\nclass P(typing.NamedTuple):\n"
        "    scheme: str\n\n    def copy_with(self):\n        return self\n\n"
        "    def _replace(self):\n        return self\n\n\n"
        "class Q(NamedTuple):\n    def count(self):\n        return 0\n\n\n"
        "P('a').copy_with()\n"
    ),
}


def test_a_method_of_a_named_tuple_renames_unless_tuple_has_it() -> None:
    """`typing.NamedTuple` is a function, not a class: its classes derive from tuple."""
    result, out = renamed(NAMED, "m.py::P.copy_with", "with_copy")
    assert result.refusal is None, result.detail
    assert "P('a').with_copy()" in out["m.py"]
    for symbol in ("m.py::P._replace", "m.py::Q.count"):
        result, _ = renamed(NAMED, symbol, "other")
        assert result.refusal == "unresolved" and "which has" in result.detail, result.detail


JUPYTER = {  # rich 13.9's jupyter.py: every renderable derives from JupyterMixin
    "m.py": (
        "class JupyterMixin:\n    def _repr_mimebundle_(self, include, exclude):\n"
        "        return {}\n\n    def _private(self):\n        return 1\n\n\n"
        "class Table(JupyterMixin):\n    pass\n\n\nTable()._private()\n"
    ),
}


@pytest.mark.parametrize(
    ("symbol", "new", "refusal", "spelled"),
    [
        ("m.py::JupyterMixin._repr_mimebundle_", "mimebundle", "unresolved", "_repr_mimebundle_"),
        ("m.py::JupyterMixin._private", "_repr_html_", "invalid", "_repr_html_"),
    ],
)
def test_a_sunder_name_is_never_renamed_nor_given(
    symbol: str, new: str, refusal: str, spelled: str
) -> None:
    """IPython looks `_repr_mimebundle_` up by name: renamed, rich tables lost their HTML form
    in a notebook (IPython's DisplayFormatter gave only text/plain) and no test noticed."""
    result, _ = renamed(JUPYTER, symbol, new)
    assert result.refusal == refusal, result
    assert f"{spelled} is a name Python itself calls" in result.detail, result.detail


def test_a_private_name_still_renames() -> None:
    result, out = renamed(JUPYTER, "m.py::JupyterMixin._private", "_hidden")
    assert result.refusal is None, result.detail
    assert "Table()._hidden()" in out["m.py"]


SORTED = {  # httpx 0.28: `__all__` is kept sorted, and tests/test_exported_members.py says so
    "pkg/__init__.py": (
        "from .models import *\n\n__all__ = [\n    'Auth',\n    'codes',\n    'Request',\n"
        "    'Response',\n]\n"
    ),
    "pkg/models.py": (
        "__all__ = ['Auth', 'Request', 'Response', 'stream']\n\n\nclass Auth: pass\n\n\n"
        "class Request: pass\n\n\nclass Response: pass\n\n\ndef stream(): pass\n\n\ncodes = 1\n"
    ),
    "pkg/loose.py": "from .models import Response\n\n__all__ = ['Response', 'Auth0', 'Zed']\n",
}


def test_a_sorted_all_stays_sorted() -> None:
    """Renamed in place, httpx's `Response` -> `Reply` left `__all__` out of order and
    test_all_imports_are_exported failed."""
    result, out = renamed(SORTED, "pkg/models.py::Response", "Reply")
    assert result.refusal is None, result.detail
    assert out["pkg/__init__.py"] == (  # case-folded order, as httpx sorts it
        "from .models import *\n\n__all__ = [\n    'Auth',\n    'codes',\n    'Reply',\n"
        "    'Request',\n]\n"
    )
    assert out["pkg/models.py"].startswith("__all__ = ['Auth', 'Reply', 'Request', 'stream']\n")
    assert "class Reply: pass" in out["pkg/models.py"]
    # an unsorted list keeps its order: only the renamed entry changes
    assert out["pkg/loose.py"].endswith("__all__ = ['Reply', 'Auth0', 'Zed']\n")


MIRROR = {  # httpx 0.28: its exceptions mirror httpcore's, mapped and compared by name
    "pkg/errors.py": "class PoolTimeout(Exception):\n    pass\n\n\nclass Own(Exception):\n    pass\n",
    "pkg/transport.py": (
        "import httpcore\n\nfrom pkg import errors\nfrom pkg.errors import Own, PoolTimeout\n\n"
        "MAP = {httpcore.PoolTimeout: PoolTimeout}\nerrors.Own\n"
    ),
}


def test_a_class_named_like_an_outside_modules_attribute_is_not_renamed_silently() -> None:
    """Renaming httpx's PoolTimeout was complete and broke test_httpcore_all_exceptions_mapped,
    which checks every httpcore exception has an httpx one of the same __name__."""
    result, _ = renamed(MIRROR, "pkg/errors.py::PoolTimeout", "PoolWait")
    assert result.refusal == "unresolved", result
    assert "pkg/transport.py:6" in result.detail and "outside the workspace" in result.detail
    result, out = renamed(MIRROR, "pkg/errors.py::Own", "Mine")  # errors.Own is the workspace's
    assert result.refusal is None, result.detail
    assert "errors.Mine\n" in out["pkg/transport.py"]


LOADER = {  # pytest 8.3's AssertionRewritingHook
    "m.py": (
        "import importlib.abc\n\n\nclass Hook(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
        "    def get_resource_reader(self, name):\n        return None\n\n\n"
        "Hook().get_resource_reader('x')\n"
    ),
}


def test_an_optional_method_of_an_import_hook_is_not_renamed() -> None:
    """importlib.resources asks a loader for `get_resource_reader`, which importlib.abc.Loader
    does not define: renamed, test_load_resource_via_files_with_rewrite failed."""
    import importlib.abc  # noqa: F401  (loaded, as in the host; the rule needs the class)

    result, _ = renamed(LOADER, "m.py::Hook.get_resource_reader", "reader")
    assert result.refusal == "unresolved", result
    assert "calls its hooks' methods by name" in result.detail, result.detail
