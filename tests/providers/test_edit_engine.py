"""Rename and unused-import removal in-process, on the inspect engine's index (no processes)."""

from __future__ import annotations

from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from reference_host.edit.textedits import Edit, apply_text_edits
from reference_host.providers import PYTHON_EDIT
from reference_host.providers.editing import ProposeRequest
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.loaded import Loaded
from reference_host.providers.pyindex.rename import (
    RenameResult,
    files_to_read,
    plan_rename,
    unindexed_refusal,
)
from reference_host.providers.pyindex.unused_imports import apply_fixes, unused_import_fixes
from reference_host.providers.python_edit import PythonEditProvider
from tests.support.renamed import renamed

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
    return renamed(sources, symbol, new)


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


def test_the_files_a_rename_reads_give_the_same_plan_as_every_file() -> None:
    """The edit provider reads only the files whose facts use, import or export the name
    (`files_to_read`); a comment or string elsewhere gets no edit, so the plan is the same."""
    sources = {**SOURCES, "notes.py": "# fetch is documented here\nTEXT = 'fetch'\n"}
    index = InspectEngine().index_sources({p: s.encode() for p, s in sources.items()})
    found = files_to_read(index, "pkg/api.py::fetch")
    assert found is not None
    name, paths = found
    assert name == "fetch" and set(paths) == {"pkg/api.py", "pkg/__init__.py", "app.py"}
    some = plan_rename(index, {p: sources[p] for p in paths}, "pkg/api.py::fetch", "get_url")
    every = plan_rename(index, dict(sources), "pkg/api.py::fetch", "get_url")
    assert some.refusal is None and (some.sites, some.strings) == (every.sites, every.strings)
    assert files_to_read(index, "pkg/api.py::nothing_here") is None


def test_a_file_without_facts_blocks_a_rename_only_when_it_may_use_the_name() -> None:
    assert unindexed_refusal("fetch", {"old.py": "print 'x'\n"}) is None
    assert "old.py could not be indexed" in str(unindexed_refusal("fetch", {"old.py": "fetch()"}))
    assert "old.py could not be read" in str(unindexed_refusal("fetch", {"old.py": None}))


@pytest.mark.anyio
async def test_a_rename_whose_file_cannot_be_read_again_is_incomplete() -> None:
    """The index was built from a read; if the file that uses the name is not served on the
    second read, its uses would be left unrenamed: the plan says so instead."""
    index = InspectEngine().index_sources({p: s.encode() for p, s in SOURCES.items()})

    blobs = {path: blob_id(text.encode()) for path, text in SOURCES.items()}
    served = {blobs[p]: SOURCES[p].encode() for p in SOURCES if p != "app.py"}

    class Refusing:  # serves every blob but app.py's
        async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, Any]]:
            return {b: served[b] for b in ids if b in served}, {}

    loaded = Loaded(index, blobs, {}, Refusing())  # type: ignore[arg-type]
    request = ProposeRequest("rename", {"rev": "git:tree:x"}, ["**"], "proposal:1", {})
    request.args.update(symbol="pkg/api.py::fetch", newName="get_url")
    provider = PythonEditProvider()
    plan = await provider._rename(request, {"id": PYTHON_EDIT.id}, loaded)
    assert plan["status"] == "incomplete", plan
    assert plan["incomplete"]["detail"].startswith("app.py could not be read again")
