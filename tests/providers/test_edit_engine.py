"""Rename and unused-import removal in-process, on the inspect engine's index (no processes)."""

from __future__ import annotations

from reference_host.edit.textedits import Edit, apply_text_edits
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.rename import RenameResult, plan_rename
from reference_host.providers.pyindex.unused_imports import apply_fixes, unused_import_fixes

SOURCES = {
    "pkg/__init__.py": "from pkg.api import fetch\n__all__ = ['fetch']\n",
    "pkg/api.py": (
        "def fetch(url):\n    return url\n\n\nclass Api:\n    def get(self, u):\n"
        "        return fetch(u)\n\n    def post(self, u):\n        return self.get(u)\n"
    ),
    "app.py": (
        "from pkg.api import fetch, Api\nimport pkg.api\nfrom pkg import fetch as f2\n\n"
        "print(fetch('a'), pkg.api.fetch('b'), f2('c'), Api().get('d'))\n"
    ),
}


def _rename(
    symbol: str, new: str, sources: dict[str, str] = SOURCES
) -> tuple[RenameResult, dict[str, str]]:
    index = InspectEngine().index_sources({p: s.encode() for p, s in sources.items()})
    result = plan_rename(index, dict(sources), symbol, new)
    out = dict(sources)
    if result.refusal is None:
        for path in set(result.sites) | set(result.strings):
            edits = [
                Edit((ln, c), (ln, c + len(result.old)), new)
                for ln, c in result.sites.get(path, ())
            ]
            edits += [Edit(t.start, t.end, f"'{new}'") for t in result.strings.get(path, [])]
            out[path] = apply_text_edits(sources[path].encode(), edits).decode()
    return result, out


def test_rename_function_updates_definition_references_imports_and_all() -> None:
    result, out = _rename("pkg.api.fetch", "request")
    assert result.refusal is None, result.detail
    assert (
        out["pkg/api.py"].startswith("def request(url):")
        and "return request(u)" in out["pkg/api.py"]
    )
    assert out["pkg/__init__.py"] == "from pkg.api import request\n__all__ = ['request']\n"
    assert out["app.py"].startswith("from pkg.api import request, Api\n")
    assert "from pkg import request as f2" in out["app.py"]
    assert "print(request('a'), pkg.api.request('b'), f2('c'), Api().get('d'))" in out["app.py"]
    for text in out.values():
        compile(text, "<renamed>", "exec")


def test_rename_method_through_self_and_instances() -> None:
    result, out = _rename("pkg/api.py::Api.get", "fetch_one")
    assert result.refusal is None, result.detail
    assert "    def fetch_one(self, u):" in out["pkg/api.py"]
    assert "return self.fetch_one(u)" in out["pkg/api.py"]
    assert "Api().fetch_one('d')" in out["app.py"]


def test_rename_refuses_collisions_bad_names_and_unknown_symbols() -> None:
    assert _rename("pkg.api.fetch", "Api")[0].refusal == "invalid"
    assert _rename("pkg/api.py::Api.get", "post")[0].refusal == "invalid"
    assert _rename("pkg.api.fetch", "class")[0].refusal == "invalid"
    assert _rename("pkg.api.nothing_here", "x")[0].refusal == "unresolved"
    clash = {**SOURCES, "app.py": "from pkg.api import fetch\nrequest = 1\nfetch(request)\n"}
    result, _ = _rename("pkg.api.fetch", "request", clash)
    assert result.refusal == "invalid" and "app.py" in result.detail


def test_rename_refuses_unresolvable_method_uses_and_overrides() -> None:
    loose = {**SOURCES, "use.py": "def call(obj):\n    return obj.get('x')\n"}
    result, _ = _rename("pkg/api.py::Api.get", "fetch_one", loose)
    assert result.refusal == "unresolved" and "use.py:2" in result.detail
    external = {**SOURCES, "use.py": "import requests\n\nrequests.get('x')\n"}
    assert _rename("pkg/api.py::Api.get", "fetch_one", external)[0].refusal is None
    sub = {
        **SOURCES,
        "sub.py": "from pkg.api import Api\n\n\nclass Sub(Api):\n    def get(self, u):\n        return u\n",
    }
    result, _ = _rename("pkg/api.py::Api.get", "fetch_one", sub)
    assert result.refusal == "unresolved" and "overridden" in result.detail


def test_unused_imports_removed_conservatively() -> None:
    text = (
        "from __future__ import annotations\nimport os\nimport sys, json as j\n"
        "from typing import (\n    Any,\n    List,\n)\nimport re  # kept: named in the docstring\n\n"
        "def f(a: Any) -> str:\n    '''uses re'''\n    return j.dumps(sys.argv)\n"
    )
    index = InspectEngine().index_sources({"m.py": text.encode()})
    fixes = unused_import_fixes("m.py", index.files["m.py"].facts, text)
    assert sorted(n for f in fixes for n in f.removed) == ["List", "os"]
    fixed = apply_fixes(text, fixes)
    compile(fixed, "m.py", "exec")
    assert "import os" not in fixed and "from typing import Any\n" in fixed and "import re" in fixed
    assert "from __future__ import annotations" in fixed
    init = InspectEngine().index_sources({"p/__init__.py": b"import os\n"})
    assert (
        unused_import_fixes("p/__init__.py", init.files["p/__init__.py"].facts, "import os\n") == []
    )


def test_text_edits_count_utf16_units() -> None:
    data = "s = '\U0001f600x'\n".encode()
    # the emoji is two UTF-16 units: `x` is at column 7, not 6
    assert apply_text_edits(data, [Edit((0, 7), (0, 8), "y")]) == "s = '\U0001f600y'\n".encode()
