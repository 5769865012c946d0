"""Accuracy of the inspect engine on the shapes real code uses (issue 15): instances through
`with`, assignments, `self.attr`, loops over annotated iterators; dropped uses said, not hidden;
impact along runtime imports only."""

from __future__ import annotations

from typing import Any

from reference_host.providers.pyindex import ChangedFile, InspectEngine, callers, impact, references

SESSION = "src/http/sessions.py"
API = "src/http/api.py"
REQUEST = f"{SESSION}::Session.request"

HTTP: dict[str, str] = {
    "src/http/__init__.py": "from .api import get\nfrom .sessions import Session\n",
    SESSION: (
        "from collections.abc import Iterator\n\n\n"
        "class Session:\n"
        "    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *exc):\n        return None\n\n"
        "    def request(self, method, url):\n        return method, url\n\n\n"
        "def make() -> 'Session':\n    return Session()\n\n\n"
        "def pool() -> Iterator[Session]:\n    yield Session()\n"
    ),
    API: (
        "from . import sessions\n"
        "from .sessions import Session, make, pool\n\n\n"
        "def get(url):\n"
        "    with sessions.Session() as session:\n"
        "        return session.request('get', url)\n\n\n"
        "def post(url):\n    s = Session()\n    return s.request('post', url)\n\n\n"
        "def made(url):\n    return make().request('put', url)\n\n\n"
        "def each(urls):\n    for s in pool():\n        s.request('head', urls)\n\n\n"
        "class Client:\n"
        "    def __init__(self):\n        self.session = Session()\n\n"
        "    def fetch(self, url):\n        return self.session.request('get', url)\n\n\n"
        "def unknown(thing, url):\n    return thing.request('get', url)\n"
    ),
}


def _index(files: dict[str, str]) -> Any:
    return InspectEngine().index_sources({p: t.encode() for p, t in files.items()})


def _sources(graph: dict[str, Any]) -> set[str]:
    return {e["from"] for e in graph["edges"]}


def test_calls_through_with_assignment_self_attr_return_and_loop_resolve() -> None:
    graph, _ = callers(_index(HTTP), {"id": REQUEST}, 1, 100)
    assert {
        f"{API}::get",
        f"{API}::post",
        f"{API}::made",
        f"{API}::each",
        f"{API}::Client.fetch",
    } <= _sources(graph)
    assert f"{API}::unknown" not in _sources(graph)


def test_an_answer_that_dropped_unresolved_uses_says_so() -> None:
    index = _index(HTTP)
    graph, _ = callers(index, {"id": REQUEST}, 1, 100)
    data = graph["data"]
    assert data["truncated"] is True
    (dropped,) = data["unresolvedUses"]
    assert dropped["name"] == "request" and dropped["uses"] == 1
    line = HTTP[API].splitlines().index("    return thing.request('get', url)") + 1
    assert dropped["examples"] == [f"{API}:{line}"]
    refs, _ = references(index, {"id": REQUEST}, "workspace", 100)
    assert refs["data"]["truncated"] is True and refs["data"]["unresolvedUses"]
    without = {p: t for p, t in HTTP.items()}
    without[API] = HTTP[API].split("\n\n\ndef unknown")[0] + "\n"
    clean, _ = callers(_index(without), {"id": REQUEST}, 1, 100)
    assert clean["data"]["truncated"] is False and "unresolvedUses" not in clean["data"]


def test_uses_of_unresolvable_imports_are_not_counted_as_dropped() -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "class A:\n    def join(self):\n        return 1\n",
        "pkg/b.py": "import os\n\n\ndef f(p):\n    return os.path.join(p, 'x')\n",
    }
    graph, _ = callers(_index(files), {"id": "pkg/a.py::A.join"}, 1, 100)
    assert graph["data"]["truncated"] is False


PKG: dict[str, str] = {
    "pkg/__init__.py": "from pkg.core import helper\n\n\ndef own():\n    return 1\n",
    "pkg/core.py": "def helper():\n    return 1\n",
    "pkg/other.py": "def thing():\n    return 2\n",
    "pkg/uses_own.py": "from pkg import own\nfrom pkg.other import thing\n",
    "pkg/uses_helper.py": "from pkg import helper\n",
    "pkg/whole.py": "import pkg\n",
    "pkg/typed.py": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.core import helper\n"
    ),
    "tests/test_core.py": "from pkg.core import helper\n\n\ndef test_helper():\n    assert helper()\n",
}


def test_impact_follows_runtime_imports_not_parent_packages_or_type_checking() -> None:
    index = _index(PKG)
    body, _ = impact(index, [ChangedFile("pkg/core.py", "modify")], "workspace", None, 100)
    files = set(body["impactedFiles"])
    assert {"pkg/core.py", "pkg/__init__.py", "pkg/uses_helper.py", "pkg/whole.py"} <= files
    assert "tests/test_core.py" in files
    assert "pkg/uses_own.py" not in files  # imports only names the __init__ defines itself
    assert "pkg/other.py" not in files
    assert "pkg/typed.py" not in files  # TYPE_CHECKING-only: listed apart
    assert {"kind": "depends-on", "from": "pkg/typed.py", "to": "pkg/core.py"} in body["edges"]
    assert "pkg/typed.py" in {n["id"] for n in body["impactedNodes"]}


def test_attributes_typed_through_themselves_do_not_loop() -> None:
    files = {
        "m.py": (
            "class Node:\n"
            "    def __init__(self):\n"
            "        self.items = self.items.copy()\n"
            "        self.parent = self.parent.parent\n\n"
            "    def walk(self):\n"
            "        return self.parent.walk()\n"
        )
    }
    graph, _ = callers(_index(files), {"id": "m.py::Node.walk"}, 1, 100)
    assert graph["data"]["symbols"] == ["m.py::Node.walk"]
