"""Renames that change what pytest runs, found by applying renames to flask 3.1.1 and running its
suite: pytest collects tests by their names, so a plan renaming a test out of that pattern drops
it silently, and one renaming a helper into it adds a "test" that errors."""

from __future__ import annotations

import pytest

from tests.support.renamed import renamed

SUITE = {  # flask 3.1.1's tests/test_basic.py and tests/test_config.py, in short
    "tests/test_basic.py": (
        "def common_object_test(app):\n    assert app.x == 1\n\n\n"
        "def test_options_work(app):\n    common_object_test(app)\n\n\n"
        "class TestRoutes:\n    def test_get(self):\n        def handler():\n"
        "            return 1\n\n        assert handler() == 1\n\n"
        "    def helper(self):\n        return 2\n"
    ),
    "tests/helpers.py": "def test_like():\n    return 1\n",
    "pkg/core.py": "def testing():\n    return 1\n",
}


@pytest.mark.parametrize(
    ("symbol", "new", "said"),
    [
        ("tests/test_basic.py::test_options_work", "options_work", "no longer run"),
        ("tests/test_basic.py::TestRoutes", "Routes", "no longer run"),
        ("tests/test_basic.py::TestRoutes.test_get", "get_works", "no longer run"),
        ("tests/test_basic.py::common_object_test", "test_common_object", "collect"),
        ("tests/test_basic.py::TestRoutes.helper", "test_helper", "collect"),
    ],
)
def test_a_rename_that_changes_what_pytest_collects_is_incomplete(
    symbol: str, new: str, said: str
) -> None:
    result, _ = renamed(SUITE, symbol, new)
    assert result.refusal == "unresolved", result
    assert said in result.detail and "tests/test_basic.py:" in result.detail, result.detail


@pytest.mark.parametrize(
    ("symbol", "new"),
    [
        ("tests/test_basic.py::test_options_work", "test_options"),  # still a test
        ("tests/test_basic.py::TestRoutes.test_get.handler", "test_handler"),  # nested: never
        ("tests/helpers.py::test_like", "like"),  # not a test module by its file name
        ("pkg/core.py::testing", "checking"),
        ("tests/test_basic.py::TestRoutes.helper", "assist"),
    ],
)
def test_renames_that_keep_the_collected_set_stay_complete(symbol: str, new: str) -> None:
    result, _ = renamed(SUITE, symbol, new)
    assert result.refusal is None, result.detail
