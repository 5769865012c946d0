"""`python/broken-call`: a change to a function's parameters that its unchanged callers no longer
fit is denied (reference_host/providers/check_calls.py, check_callers.py).

Before, adding a required parameter to `pkg/b.py::price` while `pkg/c.py` still called
`price(1)` was `allow`: pyflakes does not bind calls to definitions. Real host subprocess over
real git work trees; comparison `introduced` (the apply gate's) unless a test says otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.change_eval import evaluate_edit, findings_of

RULE = "python/broken-call"
FILES = {
    "pkg/__init__.py": "",
    "pkg/b.py": "def price(amount, rate=1):\n    return 0\n\n\nTOTAL = price(2)\n",
    "pkg/c.py": "from pkg.b import price\n\n\ndef show():\n    return price(1)\n",
    "pkg/d.py": "from pkg import b\nfrom . import b as bee\n\nX = b.price(3, rate=2)\nY = bee.price(4)\n",
    "app.py": "from pkg.b import price as cost\n\nprint(cost(5, 6))\n",
}


def test_a_new_required_parameter_breaks_every_caller_that_does_not_pass_it(
    tmp_path: Path,
) -> None:
    edit = {"pkg/b.py": FILES["pkg/b.py"].replace("(amount, rate=1)", "(amount, currency, rate=1)")}
    result = evaluate_edit(tmp_path, FILES, edit)
    assert result["decision"] == "deny"
    found = findings_of(result, RULE)
    assert [(p, line) for p, line, _ in found] == [
        ("pkg/b.py", 4),  # its own module
        ("pkg/c.py", 4),  # a from-import
        ("pkg/d.py", 3),  # through the module object, keyword `rate` still fine, `currency` not
        ("pkg/d.py", 4),  # a relative module import under another name
    ]
    assert "needs 'currency', which this call does not pass (its parameters changed)" in found[1][2]
    # app.py passes two positional arguments: `cost(5, 6)` binds amount and currency now


@pytest.mark.parametrize(
    ("new_definition", "broken"),
    [
        (
            "def price(amount):",
            ["app.py", "pkg/d.py"],
        ),  # rate removed: app passes 2, d passes rate=
        ("def price(amount, *, rate=1):", ["app.py"]),  # rate made keyword-only
        ("def price(value, rate=1):", []),  # renamed parameter: nobody passes it by keyword
        ("def price(amount, rate=1, extra=None):", []),  # a new optional parameter
    ],
)
def test_each_kind_of_parameter_change_is_judged_as_python_binds(
    tmp_path: Path, new_definition: str, broken: list[str]
) -> None:
    edit = {"pkg/b.py": FILES["pkg/b.py"].replace("def price(amount, rate=1):", new_definition)}
    result = evaluate_edit(tmp_path, FILES, edit)
    assert sorted({p for p, _, _ in findings_of(result, RULE)}) == broken
    assert result["decision"] == ("deny" if broken else "allow")


def test_callers_updated_in_the_same_change_are_judged_as_they_are_now(tmp_path: Path) -> None:
    edits = {
        "pkg/b.py": "def price(amount, currency):\n    return amount\n\n\nTOTAL = price(2, 'EUR')\n",
        "pkg/c.py": "from pkg.b import price\n\n\ndef show():\n    return price(1, 'EUR')\n",
        "pkg/d.py": "from pkg import b\n\nX = b.price(3, 'EUR')\n",
        "app.py": "from pkg.b import price as cost\n\nprint(cost(5, 6))\n",
    }
    result = evaluate_edit(tmp_path, FILES, edits)
    assert findings_of(result, RULE) == [] and result["decision"] == "allow"


@pytest.mark.parametrize(
    "caller",
    [
        "from pkg.b import price\n\n\ndef price(x):\n    return x\n\n\nprice(1)\n",  # redefined
        "from pkg.b import price\n\n\ndef f(price):\n    return price(1)\n",  # a parameter
        "from pkg.b import price\n\nargs = [1]\nprice(*args)\n",  # unpacked: not counted
        "from other import price\n\nprice(1)\n",  # another module's price
    ],
)
def test_calls_that_cannot_be_tied_to_the_function_for_sure_are_left_alone(
    tmp_path: Path, caller: str
) -> None:
    files = {**FILES, "pkg/c.py": caller, "other.py": "def price(x):\n    return x\n"}
    edit = {"pkg/b.py": "def price(amount, currency):\n    return amount\n"}
    result = evaluate_edit(tmp_path, files, edit)
    assert "pkg/c.py" not in {p for p, _, _ in findings_of(result, RULE)}


def test_a_decorated_function_is_not_judged(tmp_path: Path) -> None:
    files = {
        **FILES,
        "pkg/b.py": "import functools\n\n\n@functools.lru_cache\ndef price(amount):\n    return amount\n",
    }
    edit = {"pkg/b.py": files["pkg/b.py"].replace("(amount)", "(amount, currency)")}
    result = evaluate_edit(tmp_path, files, edit)
    assert findings_of(result, RULE) == []


def test_the_hosts_default_comparison_finds_them_too(tmp_path: Path) -> None:
    """`all` reads only after-states for its own findings; the changed module's before-state is
    read for this rule as well, so the default evaluation is not blind to it."""
    edit = {"pkg/b.py": FILES["pkg/b.py"].replace("(amount, rate=1)", "(amount, currency, rate=1)")}
    result = evaluate_edit(tmp_path, FILES, edit, comparison=None)
    found = [p for p, _, _ in findings_of(result, RULE)]
    assert found == ["pkg/b.py", "pkg/c.py", "pkg/d.py", "pkg/d.py"]
    assert result["decision"] == "deny"
    assert not [f for f in result["findings"] if f["diagnostic"].get("introduced")]


def test_a_plain_class_is_called_through_its_init(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/shapes.py": "class Box:\n    def __init__(self, width):\n        self.width = width\n",
        "pkg/use.py": "from pkg.shapes import Box\n\nsmall = Box(1)\nwide = Box(width=9)\n",
    }
    edit = {
        "pkg/shapes.py": files["pkg/shapes.py"].replace("(self, width)", "(self, width, depth)")
    }
    result = evaluate_edit(tmp_path, files, edit)
    assert [(p, line) for p, line, _ in findings_of(result, RULE)] == [
        ("pkg/use.py", 2),
        ("pkg/use.py", 3),
    ]
    assert "'Box' of pkg.shapes needs 'depth'" in findings_of(result, RULE)[0][2]
