"""How a rename counts the workspace's files that are not Python (pyindex/textfiles.py), and how
it reads them: listed once per baseline, through the provider's blob cache, in the strings pass's
time box, and never skipping a file it could not read.
End to end, through the host: tests/host/test_edit_host_textfiles.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers import PYTHON_EDIT
from reference_host.providers.editing import ProposeRequest
from reference_host.providers.pyindex.textfiles import kind_of, scan
from reference_host.providers.python_edit import PythonEditProvider
from tests.support.renamed import CountingHost, loaded, provider_plan

LIB = {
    "pkg/__init__.py": "",
    "pkg/paging.py": "class Paginator:\n    def get(self):\n        return 1\n",
}
SYMBOL = "pkg.paging.Paginator.get"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("app/templates/app/list.html", "template"),
        ("app/templates/registration/subject.txt", "template"),
        ("app/jinja2/form.j2", "template"),
        ("pyproject.toml", "config"),
        ("setup.cfg", "config"),
        ("Procfile", "config"),
        ("conf/settings.yaml", "config"),
        ("pkg.egg-info/entry_points.txt", "config"),
        ("README.md", "docs"),
        ("docs/ref/templates/api.txt", "docs"),  # Django's docs about templates
        ("docs/spelling_wordlist", "docs"),
        ("notes.txt", "docs"),
        ("LICENSE", "docs"),
        ("docs/man/tool.1", "docs"),
        ("app/locale/de/LC_MESSAGES/django.po", "skip"),
        ("app/locale/de/LC_MESSAGES/django.po.tmp", "skip"),
        ("app/static/app.js", "skip"),
        ("app/static/logo.PNG", "skip"),
        ("MANIFEST.in", "skip"),
        ("sub/.gitignore", "skip"),
    ],
)
def test_kinds_by_name(path: str, kind: str) -> None:
    assert kind_of(path) == kind


def test_a_template_counts_the_name_in_its_tags_only() -> None:
    """Outside its tags a template is text it prints; a tag's own name (`{% url %}`) and the
    quoted literals in a tag (`{% translate "get help" %}`) are not Python looked up by name."""
    page = (
        '<form method="get">get\n{% url "get" %}{% translate "get help" %}\n'
        "{{ pager.get }}\n{% if pager.get %}x{% endif %}\n"
    )
    found = scan("t/templates/p.html", page.encode(), "get", set().__contains__)
    assert found.counted == [3, 4] and found.prose == []
    # a filter's name is a registered filter's, not a Python name (Django's `|capfirst`)
    filters = (
        "{{ title|capfirst }}\n{{ x | capfirst(2) }}\n{{ capfirst }}\n{{ a|b:capfirst }}\n"
        "{% filter capfirst|lower %}x{% endfilter %}\n"
    )
    found = scan("t/templates/f.html", filters.encode(), "capfirst", set().__contains__)
    assert found.counted == [3, 4]


def test_sphinx_targets_count_under_the_current_module_and_prose_does_not() -> None:
    page = (
        ".. currentmodule:: pkg.paging\n\n.. method:: Paginator.get(number)\n\n"
        "Use get to fetch; see :meth:`~pkg.paging.Paginator.get` and :meth:`other.get`.\n"
    )
    found = scan("docs/p.rst", page.encode(), "get", {"pkg.paging.Paginator.get"}.__contains__)
    assert found.counted == [3, 5] and found.prose == []
    prose = scan(
        "docs/p.rst", b"Use get to fetch.\n", "get", {"pkg.paging.Paginator.get"}.__contains__
    )
    assert prose.counted == [] and prose.prose == [1]


def test_binary_content_is_not_read_whatever_its_name() -> None:
    assert scan("conf/data.cfg", b"get\0", "get", set().__contains__).counted == []


async def _plan(provider: PythonEditProvider, sources: dict[str, Any], host: Any) -> dict[str, Any]:
    request = ProposeRequest("rename", {"rev": "git:tree:x"}, ["**"], "proposal:1", {})
    request.args.update(symbol=SYMBOL, newName="fetch")
    session = replace(loaded(sources, host), cache=provider.blob_cache, key="k")
    return await provider._rename(request, {"id": PYTHON_EDIT.id}, session)


@pytest.mark.anyio
async def test_other_files_are_listed_once_per_baseline_and_read_once() -> None:
    sources = {**LIB, "docs/guide.md": "Call get.\n", "setup.cfg": "[x]\ny = 1\n"}
    provider = PythonEditProvider()
    first = CountingHost(sources)
    plan = await _plan(provider, sources, first)
    assert plan["status"] == "complete" and "docs/guide.md:1" in plan["warnings"][0], plan
    assert blob_id(b"[x]\ny = 1\n") in first.asked
    again = CountingHost(sources)
    assert (await _plan(provider, sources, again))["status"] == "complete"
    assert again.asked == [] and again.listings == 0


@pytest.mark.anyio
async def test_a_file_that_cannot_be_read_makes_the_rename_incomplete_naming_it() -> None:
    sources = {**LIB, "conf/app.yaml": "handler: nothing\n"}
    host = CountingHost(sources, refused="conf/app.yaml")
    plan = await _plan(PythonEditProvider(), sources, host)
    assert plan["status"] == "incomplete", plan
    assert plan["incomplete"]["reason"] == "unresolved-reference"
    assert "conf/app.yaml" in plan["incomplete"]["detail"]


@pytest.mark.anyio
async def test_a_read_past_the_time_box_is_recoverable_and_keeps_what_it_read() -> None:
    sources = {**LIB, "conf/app.yaml": "handler: nothing\n"}
    provider = PythonEditProvider()
    provider.strings_wait = 0.3
    stalled = CountingHost(sources, open_batches=2)  # the Python reads, then the other files hang
    plan = await _plan(provider, sources, stalled)
    assert plan["status"] == "incomplete", plan
    assert plan["incomplete"]["reason"] == "budget-exhausted"
    assert plan["incomplete"]["recoverable"] is True
    assert "non-Python files" in plan["incomplete"]["detail"]
    served = CountingHost(sources)
    assert (await _plan(provider, sources, served))["status"] == "complete"
    assert served.asked == [blob_id(b"handler: nothing\n")], "the Python files were kept"


@pytest.mark.anyio
async def test_a_config_file_naming_the_function_makes_the_rename_incomplete() -> None:
    sources = {**LIB, "setup.cfg": "[options.entry_points]\nx =\n    y = pkg.paging:get\n"}
    plan = await provider_plan(sources, "rename", symbol=SYMBOL, newName="fetch")
    assert plan["status"] == "incomplete" and "setup.cfg:3" in plan["incomplete"]["detail"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("init", "page", "counted"),
    [
        ("from pkg.paging import Paginator\n", ":meth:`pkg.Paginator.get`\n", True),
        ("from pkg.paging import *\n", ".. automethod:: pkg.Paginator.get\n", True),
        ("", ".. currentmodule:: pkg\n\n.. method:: Paginator.get()\n", False),  # not exported
        ("from pkg.paging import slug\n", ":func:`pkg.slug`\n", True),
        ("from pkg.paging import slug as slug\n", ":func:`pkg.slug`\n", False),  # still works
        ("from pkg.paging import slug\n", ":func:`other.slug`\n", False),
    ],
)
async def test_a_sphinx_target_through_a_re_export_counts_when_it_changes(
    init: str, page: str, counted: bool
) -> None:
    """Django documents `django.forms.Script`, which `django/forms/__init__.py` re-exports with a
    star import: renaming the class breaks that reference as much as its own path would."""
    paging = LIB["pkg/paging.py"] + "\n\ndef slug():\n    pass\n"
    sources = {"pkg/__init__.py": init, "pkg/paging.py": paging, "docs/api.rst": page}
    name = "slug" if "slug" in page else "get"
    symbol = "pkg.paging.slug" if name == "slug" else SYMBOL
    plan = await provider_plan(sources, "rename", symbol=symbol, newName="renamed")
    if counted:
        assert plan["status"] == "incomplete" and "docs/api.rst:" in plan["incomplete"]["detail"]
    else:
        assert plan["status"] == "complete", plan
        assert "docs/api.rst:" in plan["warnings"][0]


def test_a_method_directive_in_a_class_body_reads_the_class() -> None:
    """Django's docs/ref/contrib/gis/gdal.txt: `.. class:: Envelope` then, indented,
    `.. method:: expand_to_include(*args)`."""
    page = (
        ".. module:: pkg.paging\n\n.. class:: Paginator\n\n    Text.\n\n"
        "    .. method:: get(number)\n\n        Uses get.\n\n.. function:: get()\n"
    )
    found = scan("docs/p.rst", page.encode(), "get", {"pkg.paging.Paginator.get"}.__contains__)
    assert found.counted == [7] and found.prose == [9, 11]
