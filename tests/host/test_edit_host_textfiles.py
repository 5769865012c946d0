"""A rename and the workspace's files that are not Python, through the real host.

On Django a method used only from templates (`{{ page.has_other_pages }}`) was renamed
`complete`, and the templates broke when the plan was applied; entry points in pyproject.toml
and Sphinx's `.. autofunction:: pkg.mod.name` were never looked at either. Now those uses make
the plan incomplete with where, a prose mention in the docs is a plan warning, and locale
catalogues and binary files are not read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo
from tests.support.host_harness import HostProcess
from tests.support.renamed import with_plan

PAGES = (
    "class Page:\n"
    "    def has_other_pages(self):\n        return True\n\n"
    "    def number_label(self):\n        return '1'\n\n\n"
    "def main():\n    return Page()\n\n\n"
    "def make_slug(text):\n    return text.lower()\n\n\n"
    "def translated():\n    return 'x'\n\n\n"
    "def area(r):\n    return 3 * r * r\n"
)
FILES: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/pages.py": PAGES,
    "pkg/views.py": "from pkg.pages import area\n\nprint(area(2))\n",
    "pkg/templates/pkg/page.html": (
        '{% extends "base.html" %}\n<form method="get">\n'
        "{% if page.has_other_pages %}<nav>more</nav>{% endif %}\n</form>\n"
    ),
    "pyproject.toml": '[project]\nname = "pkg"\n\n[project.scripts]\npkgtool = "pkg.pages:main"\n',
    "README.md": "# pkg\n\nEach page has a label: number_label gives it.\n",
    "docs/api.rst": "API\n===\n\n.. autofunction:: pkg.pages.make_slug\n",
    "pkg/locale/de/LC_MESSAGES/django.po": 'msgid "translated"\nmsgstr "übersetzt"\n',
    "pkg/static/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0translated\0area\0",
    "data/blob.dat": b"\0\0translated area\n",
}
PLAN = "outer-host.schema.json#/$defs/requestEditPlanResult"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    repo = make_repo(tmp_path_factory.mktemp("textfiles") / "repo", FILES)
    process = HostProcess(repo, None).start()
    yield process
    assert process.stop() == 0


def _rename(host: HostProcess, symbol: str, new: str) -> dict[str, Any]:
    baseline = host.call("host/status", {})["workspace"]["baseline"]
    params = {"symbol": symbol, "newName": new}
    result = host.call(
        "host/requestEditPlan",
        {"callSite": "interactive", "operation": "rename", "baseline": baseline, "args": params},
        timeout=60,
    )
    assert_valid(result, PLAN)
    plan: dict[str, Any] = result["proposal"]
    return plan


def _incomplete(plan: dict[str, Any]) -> str:
    assert plan["status"] == "incomplete", plan
    assert plan["incomplete"]["reason"] == "unresolved-reference", plan["incomplete"]
    detail: str = plan["incomplete"]["detail"]
    return detail


@pytest.mark.needs_definitions
def test_a_method_used_from_a_template_is_incomplete_naming_the_line(host: HostProcess) -> None:
    detail = _incomplete(_rename(host, "pkg.pages.Page.has_other_pages", "has_more_pages"))
    assert "pkg/templates/pkg/page.html:3" in detail, detail


@pytest.mark.needs_definitions
def test_a_function_named_by_an_entry_point_is_incomplete(host: HostProcess) -> None:
    detail = _incomplete(_rename(host, "pkg.pages.main", "run"))
    assert "pyproject.toml:5" in detail, detail


@pytest.mark.needs_definitions
def test_an_autodoc_directive_with_the_dotted_path_is_incomplete(host: HostProcess) -> None:
    detail = _incomplete(_rename(host, "pkg.pages.make_slug", "slugify"))
    assert "docs/api.rst:4" in detail, detail


@pytest.mark.needs_definitions
def test_a_prose_mention_in_the_readme_is_a_warning_of_a_complete_plan(host: HostProcess) -> None:
    plan = _rename(host, "pkg.pages.Page.number_label", "label")
    assert plan["status"] == "complete", plan
    assert len(plan["warnings"]) == 1, plan["warnings"]
    assert "README.md:3" in plan["warnings"][0] and "documentation" in plan["warnings"][0]
    assert [t["path"] for t in plan["touchedResources"]] == ["pkg/pages.py"]


@pytest.mark.needs_definitions
def test_locale_catalogues_and_binary_files_are_not_read(host: HostProcess) -> None:
    plan = _rename(host, "pkg.pages.translated", "localized")
    assert plan["status"] == "complete", plan
    assert "warnings" not in plan


@pytest.mark.needs_definitions
def test_a_rename_no_other_file_mentions_is_complete_as_before(host: HostProcess) -> None:
    plan = _rename(host, "pkg.pages.area", "disc_area")
    assert plan["status"] == "complete", plan
    assert "warnings" not in plan
    tree = {p: c.encode() if isinstance(c, str) else c for p, c in FILES.items()}
    out = with_plan(tree, plan)
    assert {t["path"] for t in plan["touchedResources"]} == {"pkg/pages.py", "pkg/views.py"}
    assert out["pkg/views.py"] == b"from pkg.pages import disc_area\n\nprint(disc_area(2))\n"
    assert out["pkg/pages.py"] == PAGES.replace("def area(", "def disc_area(").encode()
