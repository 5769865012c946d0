"""`python/broken-import`: a change that removes a module or a top-level name that its importers
still need is denied (reference_host/providers/check_imports.py, check_uses.py, check_importers.py).

Before, deleting `b.py` beside an unchanged `c.py` holding `from b import X` was `allow`: the check
read the changed files only. Real host subprocess, real git work trees; each case is the work tree's
change evaluated at `gate` with the built-in default policy.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from reference_host.providers.check_imports import ImportWords, top_level_names
from tests.support.change_eval import evaluate_edit, findings_of

RULE = "python/broken-import"
PKG = {
    "pkg/__init__.py": "",
    "pkg/b.py": "X = 1\n\n\ndef helper():\n    return X\n",
    "pkg/c.py": "from pkg.b import X\n\nprint(X)\n",
}


_evaluate = evaluate_edit  # comparison `introduced` (the apply gate's) unless given None


def _broken(result: dict[str, Any]) -> list[tuple[str, int, str]]:
    return findings_of(result, RULE)


def test_deleting_a_module_an_unchanged_sibling_imports_is_denied(tmp_path: Path) -> None:
    files = {"b.py": "X = 1\n", "c.py": '"""Uses b."""\nfrom b import X\n\nprint(X)\n'}
    result = _evaluate(tmp_path, files, {"b.py": None}, comparison=None)
    assert result["decision"] == "deny"
    [(path, line, message)] = _broken(result)
    assert (path, line) == ("c.py", 1)
    assert "removes module b (b.py)" in message


@pytest.mark.parametrize(
    ("importer", "text"),
    [
        ("other/use.py", "from pkg.b import X\n"),
        ("other/use.py", "from pkg import b\n"),
        ("other/use.py", "import pkg.b\n"),
        ("pkg/d.py", "from . import b\n"),
        ("pkg/d.py", "from .b import helper\n"),
        ("pkg/sub/e.py", "from ..b import (\n    X,\n    helper,\n)\n"),
    ],
)
def test_every_spelling_of_an_import_of_a_deleted_package_module(
    tmp_path: Path, importer: str, text: str
) -> None:
    files = {**PKG, "pkg/sub/__init__.py": "", importer: text}
    del files["pkg/c.py"]
    result = _evaluate(tmp_path, files, {"pkg/b.py": None})
    assert [(p, m.split(", but")[1]) for p, _, m in _broken(result)] == [
        (importer, " this change removes module pkg.b (pkg/b.py)")
    ]
    assert result["decision"] == "deny"


def test_removing_a_name_its_importers_need_is_denied(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, PKG, {"pkg/b.py": "def helper():\n    return 2\n"})
    assert result["decision"] == "deny"
    [(path, line, message)] = _broken(result)
    assert (path, line) == ("pkg/c.py", 0)
    assert message == "'X' is imported from pkg.b, but this change removes it from that module"


def test_a_module_that_reads_vars_of_an_object_still_loses_names(tmp_path: Path) -> None:
    """Measured on Django: removing LabelCommand from django/core/management/base.py (which
    calls `vars(options)`) was not reported at its three importers: the module was taken for
    one that may bind names it does not spell. Same for get_docs_version and django/utils/version.py,
    which reads `"__file__" not in globals()`."""
    after = "def helper(options):\n    return vars(options), '__file__' in globals()\n"
    result = _evaluate(tmp_path, PKG, {"pkg/b.py": after})
    assert [(p, line) for p, line, _ in _broken(result)] == [("pkg/c.py", 0)]


def test_findings_are_marked_introduced_for_an_introduced_evaluation(tmp_path: Path) -> None:
    result = _evaluate(tmp_path, PKG, {"pkg/b.py": None}, comparison="introduced")
    [finding] = [f for f in result["findings"] if f["diagnostic"]["code"] == RULE]
    assert finding["diagnostic"].get("introduced") is True or finding.get("introduced") is True
    assert result["decision"] == "deny"


@pytest.mark.parametrize(
    ("edits", "why"),
    [
        ({"pkg/c.py": "print(1)\n", "pkg/b.py": None}, "the importer was changed too"),
        ({"pkg/b.py": None, "pkg/b/__init__.py": "X = 1\n"}, "the module became a package"),
        ({"pkg/b.py": "if True:\n    X = 2\n"}, "the name is still bound"),
        ({"pkg/b.py": "def __getattr__(name):\n    return 1\n"}, "the module is dynamic"),
        ({"pkg/b.py": "from pkg.other import *\n"}, "a star import may bind it"),
        ({"pkg/b.py": "globals()['X'] = 1\n"}, "globals() may bind it"),
        ({"pkg/b.py": "def f():\n    global X\n    X = 1\n"}, "a global statement binds it"),
    ],
)
def test_nothing_is_reported_where_the_import_still_works(
    tmp_path: Path, edits: dict[str, str | None], why: str
) -> None:
    files = {**PKG, "pkg/other.py": "X = 1\n"}
    result = _evaluate(tmp_path, files, edits)
    assert _broken(result) == [], why


@pytest.mark.parametrize(
    "importer_text",
    [
        "try:\n    from pkg.b import X\nexcept ImportError:\n    X = None\n",
        "try:\n    import pkg.b\nexcept (ModuleNotFoundError, OSError):\n    pass\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import X\n",
    ],
)
def test_optional_and_type_checking_imports_are_not_reported(
    tmp_path: Path, importer_text: str
) -> None:
    files = {**PKG, "pkg/c.py": importer_text}
    result = _evaluate(tmp_path, files, {"pkg/b.py": None})
    assert _broken(result) == []


def test_a_plain_name_from_another_folder_is_not_taken_for_the_deleted_module(
    tmp_path: Path,
) -> None:
    """`import helpers` in app/ may mean an installed `helpers` or app/'s own: not a finding.
    A dotted name whose first part is not a package of the workspace is not one either."""
    files = {
        "tools/helpers.py": "H = 1\n",
        "tools/run.py": "import helpers\n",
        "app/x.py": "import helpers\nimport six.moves\n",
        "six/moves.py": "M = 1\n",
    }
    result = _evaluate(tmp_path, files, {"tools/helpers.py": None, "six/moves.py": None})
    assert [(p, line) for p, line, _ in _broken(result)] == [("tools/run.py", 0)]


def test_top_level_names_cover_what_a_module_binds() -> None:
    source = (
        "import os.path\nfrom a import b as c\nX: int = 1\nfor i in range(2):\n    pass\n"
        "with open('f') as (h, k):\n    pass\ntry:\n    import json\nexcept ImportError:\n"
        "    json = None\nclass K:\n    inner = 1\ndef f():\n    local = 1\n"
        "if (w := 3):\n    Y = [z for z in range(3)]\n"
    )
    assert top_level_names(ast.parse(source)) == {
        "os", "c", "X", "i", "h", "k", "json", "K", "f", "w", "Y"
    }  # fmt: skip
    assert top_level_names(ast.parse("import sys\nsys.modules[__name__].X = 1\n")) is None
    assert top_level_names(ast.parse("vars()['X'] = 1\n")) is None
    assert top_level_names(ast.parse("def f(o):\n    return vars(o)\n")) == {"f"}
    reads = "A = '__file__' in globals()\nB = globals().get('A')\nC = globals()['A']\n"
    assert top_level_names(ast.parse(reads)) == {"A", "B", "C"}
    for writes in (
        "globals()['X'] = 1\n",
        "globals().update(X=1)\n",
        "exec('X = 1', globals())\n",
        "exec('X = 1')\n",
    ):
        assert top_level_names(ast.parse(writes)) is None, writes


def test_import_words_read_a_parenthesised_list_over_several_lines() -> None:
    words = ImportWords().learn("blob:1", b"x = 1\nfrom pkg.b import (\n    X,\n    helper,\n)\n")
    assert {b"pkg", b"b", b"X", b"helper"} <= words and b"x" not in words


@pytest.mark.parametrize(
    ("importer", "text", "line", "spelled"),
    [
        ("other/use.py", "from pkg import b\n\n\ndef f():\n    return b.X\n", 4, "b.X"),
        ("other/use.py", "import pkg.b as m\n\nprint(m.X)\n", 2, "m.X"),
        ("other/use.py", "import pkg.b\n\nprint(pkg.b.X + 1)\n", 2, "pkg.b.X"),
        ("pkg/d.py", "from . import b\n\nY = [b.X]\n", 2, "b.X"),
        ("pkg/d.py", "from . import b as bee\n\nclass K:\n    y = bee.X\n", 3, "bee.X"),
        ("pkg/d.py", "def f():\n    from pkg import b\n\n    return lambda: b.X\n", 3, "b.X"),
    ],
)
def test_a_removed_name_used_through_the_module_object_is_denied(
    tmp_path: Path, importer: str, text: str, line: int, spelled: str
) -> None:
    """Measured on attrs: `from . import setters` ... `setters.validate` at module level raised
    AttributeError and was not reported (bench/broken_imports_real.py)."""
    files = {**PKG, importer: text}
    del files["pkg/c.py"]
    result = _evaluate(tmp_path, files, {"pkg/b.py": "def helper():\n    return 2\n"})
    assert _broken(result) == [
        (
            importer,
            line,
            f"'{spelled}' is used from pkg.b, but this change removes X from that module",
        )
    ]
    assert result["decision"] == "deny"


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ({"pkg/c.py": "from pkg import b\n\n\ndef f(b):\n    return b.X\n"}, "a parameter"),
        ({"pkg/c.py": "from pkg import b\n\nb = None\nprint(b.X)\n"}, "rebound"),
        ({"pkg/c.py": "from pkg import b\nfrom other import b\nprint(b.X)\n"}, "imported twice"),
        ({"pkg/c.py": "def f():\n    from pkg import b\n\n\ndef g():\n    return b.X\n"}, "elsewhere"),
        ({"pkg/c.py": "from pkg import b\n\n\ndef f(x: b.X) -> b.X:\n    y: b.X = x\n"}, "annotated"),
        ({"pkg/c.py": "from pkg import b\ntry:\n    Y = b.X\nexcept AttributeError:\n    Y = 0\n"}, "guarded"),
        ({"pkg/c.py": "from pkg import b\n\nif hasattr(b, 'X'):\n    print(b.X)\n"}, "hasattr"),
        ({"pkg/c.py": "from pkg import b\n\nb.X = 2\nprint(b.X)\n"}, "set here"),
        ({"pkg/c.py": "try:\n    from pkg import b\nexcept ImportError:\n    b = None\nprint(b.X)\n"}, "optional"),
        ({"pkg/c.py": "from typing import TYPE_CHECKING\nfrom pkg import b\nif TYPE_CHECKING:\n    Z = b.X\n"}, "type checking"),
        ({"pkg/__init__.py": "b = None\n", "pkg/c.py": "from pkg import b\nprint(b.X)\n"}, "shadowed"),
        ({"pkg/__init__.py": "from .other import *\n", "pkg/c.py": "import pkg.b\nprint(pkg.b.X)\n"}, "dynamic package"),
        ({"pkg/c.py": "import pkg\nprint(pkg.X)\n"}, "another module"),
    ],
)  # fmt: skip
def test_a_use_that_may_not_reach_the_module_is_not_reported(
    tmp_path: Path, files: dict[str, str], why: str
) -> None:
    result = _evaluate(
        tmp_path,
        {**PKG, "pkg/other.py": "b = 1\n", **files},
        {"pkg/b.py": "def helper():\n    return 2\n"},
    )
    assert _broken(result) == [], why


def test_a_star_import_of_a_module_whose_all_still_lists_the_removed_name_is_denied(
    tmp_path: Path,
) -> None:
    """Measured on attrs: removing `min_len` from attr/validators.py (still in its `__all__`)
    broke `from attr.validators import *` in attrs/validators.py, and was not reported."""
    files = {
        **PKG,
        "pkg/b.py": '__all__ = ["X", "helper"]\nX = 1\n\n\ndef helper():\n    return X\n',
    }
    files["pkg/c.py"] = "from pkg.b import *  # noqa: F403\n"
    result = _evaluate(tmp_path, files, {"pkg/b.py": '__all__ = ["X", "helper"]\nX = 1\n'})
    assert _broken(result) == [
        (
            "pkg/c.py",
            0,
            "'*' is imported from pkg.b, whose __all__ still lists helper, "
            "but this change removes it from that module",
        )
    ]
    cleaned = _evaluate(tmp_path / "2", files, {"pkg/b.py": '__all__ = ["X"]\nX = 1\n'})
    assert _broken(cleaned) == []


def test_a_name_removed_from_a_plain_module_is_not_reported_from_another_folder(
    tmp_path: Path,
) -> None:
    """`from helpers import H` in app/ may mean an installed `helpers`: the name rule now asks the
    same of the module as the deletion rule (before: app/x.py was reported)."""
    files = {
        "tools/helpers.py": "H = 1\nG = 2\n",
        "tools/run.py": "from helpers import H\n",
        "app/x.py": "from helpers import H\n",
    }
    result = _evaluate(tmp_path, files, {"tools/helpers.py": "G = 2\n"})
    assert [(p, line) for p, line, _ in _broken(result)] == [("tools/run.py", 0)]


def test_a_package_getattr_does_not_hide_a_submodule_the_importer_imports(tmp_path: Path) -> None:
    """Measured on attrs: attr/__init__.py sets a module `__getattr__`, so `from . import setters`
    ... `setters.validate` (attr/_make.py, at import time) was not followed. A module `__getattr__`
    answers only for attributes not set, and importing the submodule sets it; a submodule the
    file does not import itself (`pkg.b` through `import pkg.other`) may not be set."""
    files = {
        **PKG,
        "pkg/__init__.py": "def __getattr__(name):\n    return 1\n",
        "pkg/other.py": "",
        "pkg/c.py": "from pkg import b\nimport pkg.other\n\nprint(b.X, pkg.b.X)\n",
    }
    result = _evaluate(tmp_path, files, {"pkg/b.py": "def helper():\n    return 2\n"})
    assert [(p, line, m.partition(" is ")[0]) for p, line, m in _broken(result)] == [
        ("pkg/c.py", 3, "'b.X'")
    ]
