"""Misses found by comparing `references` / `callers` with an independent resolver (jedi) on Django
and Salt (docs: README "Inspect"): each shape here was a use left out of an answer that said it
was complete. The trees are small generated ones; no real package code."""

from __future__ import annotations

from typing import Any

from reference_host.providers.pyindex import InspectEngine, references

MODELS = "pkg/models.py"
FILES: dict[str, str] = {
    "pkg/__init__.py": "",
    MODELS: (
        "class Base:\n"
        "    def __init__(self, url):\n        self.url = url\n\n\n"
        "class Redirect(Base):\n"
        "    allowed = ('http',)\n\n"
        "    @classmethod\n    def make(cls, url):\n        return cls(url)\n\n"
        "    class Meta:\n        def label(self):\n            return 'r'\n"
    ),
    "pkg/use.py": (
        "from pkg import models\n"
        "from pkg.models import Redirect\n\n\n"
        "def reset(response):\n"
        "    Redirect.__init__(response, 'ssh://x')\n"  # line 6: an inherited member
        "    return Redirect.make('a').url\n\n\n"  # line 7: a classmethod
        "def made() -> Redirect:\n"
        "    return Redirect.make('b')\n\n\n"  # line 11
        "def label():\n"
        "    return models.Redirect.Meta().label()\n"  # line 15: through a module, nested class
    ),
}


def _index(files: dict[str, str]) -> Any:
    return InspectEngine().index_sources({p: t.encode() for p, t in files.items()})


def _lines(graph: dict[str, Any], path: str) -> set[int]:
    return {
        e["location"]["range"]["start"]["line"] + 1
        for e in graph["edges"]
        if e["location"]["path"] == path
    }


def test_a_class_named_before_its_member_is_a_reference_of_the_class() -> None:
    index = _index(FILES)
    graph, _ = references(index, {"id": f"{MODELS}::Redirect"}, "workspace", 100)
    assert _lines(graph, "pkg/use.py") == {2, 6, 7, 10, 11, 15}
    # one reference per place it is named: the call `Redirect.make('a')` names it, not `.url`
    assert len(graph["edges"]) == len({str(e["location"]) for e in graph["edges"]})
    assert graph["data"]["truncated"] is False
    nested, _ = references(index, {"id": f"{MODELS}::Redirect.Meta"}, "workspace", 100)
    assert _lines(nested, "pkg/use.py") == {15}
    # the member itself is still the target of its own uses
    make, _ = references(index, {"id": f"{MODELS}::Redirect.make"}, "workspace", 100)
    assert _lines(make, "pkg/use.py") == {7, 11}
    assert {e["kind"] for e in make["edges"]} == {"calls"}
