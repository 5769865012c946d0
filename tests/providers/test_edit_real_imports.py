"""remove-unused-imports on the patterns real packages use (Django, Salt): what must stay.

Each case is a deliberate import a plain "no use in this file" rule would delete and so break
code elsewhere: a `# noqa` re-export (Django's `django/db/utils.py`), a name other modules import
from this one (Salt's `salt/utils/yaml.py`), a module imported for its side effects.
"""

from __future__ import annotations

import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.unused_imports import (
    apply_fixes,
    kept_imports,
    unused_import_fixes,
)
from tests.support.renamed import CountingHost, planned, provider_plan


def _removed(sources: dict[str, str]) -> dict[str, list[str]]:
    """What the provider's two passes remove per file (the same steps as `python_edit`)."""
    index = InspectEngine().index_sources({p: s.encode() for p, s in sources.items()})
    found = {p: unused_import_fixes(p, index.files[p].facts, s) for p, s in sources.items()}
    losing = {p: {n for f in fixes for n in f.removed} for p, fixes in found.items() if fixes}
    for path, names in kept_imports(index, losing).items():
        found[path] = unused_import_fixes(path, index.files[path].facts, sources[path], set(names))
    return {p: sorted(n for f in fixes for n in f.removed) for p, fixes in found.items() if fixes}


def test_noqa_marks_an_import_as_deliberate() -> None:
    text = (
        "from os import sep  # NOQA: F401\nfrom os import path  # noqa\n"
        "from os import getcwd  # noqa: E501\nimport json\nimport re  # noqa:F401,E501\n"
        "from typing import (  # noqa: F401\n    Any,\n    List,\n)\n\n\ndef f():\n    return 1\n"
    )
    assert _removed({"m.py": text}) == {"m.py": ["getcwd", "json"]}


def test_a_name_other_modules_import_from_here_stays() -> None:
    sources = {
        "pkg/__init__.py": "",
        "pkg/compat.py": "from json import JSONDecodeError\nimport os\nfrom re import sub\n",
        "a.py": "from pkg.compat import JSONDecodeError\n\nraise JSONDecodeError('x', '', 0)\n",
        "b.py": "import pkg.compat\n\nprint(pkg.compat.sub)\n",
    }
    assert _removed(sources) == {"pkg/compat.py": ["os"]}
    starred = {**sources, "c.py": "from pkg.compat import *\n\nprint(os)\n"}
    assert _removed(starred) == {}
    listed = {**starred, "pkg/compat.py": "__all__ = []\n" + sources["pkg/compat.py"]}
    del listed["b.py"]  # a star import takes only what `__all__` lists
    assert _removed(listed) == {"pkg/compat.py": ["os", "sub"]}


def test_an_import_of_a_workspace_module_stays_for_its_side_effects() -> None:
    sources = {
        "app/__init__.py": "",
        "app/signals.py": "REGISTRY = []\nREGISTRY.append('hook')\n",
        "app/models.py": "from app import signals\nimport app.signals\nimport os\n\nMODELS = []\n",
    }
    assert _removed(sources) == {"app/models.py": ["os"]}
    vendored = {  # Salt's salt/ext/vsan: a plain import of the file beside it
        "ext/vsan/registry.py": "TYPES = {}\nTYPES['x'] = 1\n",
        "ext/vsan/utils.py": "import registry\nimport json\n\nUTILS = []\n",
    }
    assert _removed(vendored) == {"ext/vsan/utils.py": ["json"]}


@pytest.mark.anyio
async def test_the_plan_says_which_unused_imports_it_kept_and_why() -> None:
    sources = {
        "pkg/__init__.py": "",
        "pkg/compat.py": "from json import JSONDecodeError\nimport os\n",
        "a.py": "from pkg.compat import JSONDecodeError\n",
    }
    plan = await provider_plan(sources, "remove-unused-imports", paths=["pkg"])
    assert plan["status"] == "complete"
    assert planned(sources, plan)["pkg/compat.py"] == "from json import JSONDecodeError\n"
    assert plan["warnings"] == [
        "kept JSONDecodeError in pkg/compat.py: other modules import it from here"
    ]


def test_a_rewritten_statement_keeps_each_kept_name_spelled_as_it_was() -> None:
    """`import os.path as os` binds the submodule, `x as x` marks a typed re-export: dropping
    their `as` would change what the name is (or what a type checker exports)."""
    text = "import os.path as os, sys\nfrom json import dumps as dumps, loads\n\nprint(os, dumps)\n"
    index = InspectEngine().index_sources({"m.py": text.encode()})
    fixed = apply_fixes(text, unused_import_fixes("m.py", index.files["m.py"].facts, text))
    assert fixed == "import os.path as os\nfrom json import dumps as dumps\n\nprint(os, dumps)\n"


@pytest.mark.anyio
async def test_only_files_whose_facts_show_an_unused_import_are_read() -> None:
    """The facts say which files keep every import; the rest are not read (sympy: the whole
    package read through the host ran past the call budget)."""
    sources = {
        "a.py": "import os\n\nprint(os)\n",
        "b.py": "import os\nimport sys\n\nprint(os)\n",
        "c.py": "from json import dumps\n__all__ = ['dumps']\n",
    }
    host = CountingHost(sources)
    plan = await provider_plan(sources, "remove-unused-imports", host, paths=list(sources))
    assert plan["status"] == "complete"
    assert host.asked == [blob_id(sources["b.py"].encode())]
    assert planned(sources, plan)["b.py"] == "import os\n\nprint(os)\n"
    assert plan["rationale"] == "Removed 1 unused import(s) in 1 of 3 file(s)."
    refusing = CountingHost(sources, refused="b.py")
    plan = await provider_plan(sources, "remove-unused-imports", refusing, paths=list(sources))
    assert plan["warnings"] == ["left b.py unchanged: the host did not serve it"]


def test_lines_are_counted_as_the_parser_counts_them() -> None:
    """A form feed (a page break in older code) is not a line break to the parser or the host;
    counted as one, the word check read the wrong lines and the rewrite replaced the wrong one."""
    text = "import os\n\x0cimport sys\nimport re\n\nprint(sys)\n"
    index = InspectEngine().index_sources({"m.py": text.encode()})
    fixes = unused_import_fixes("m.py", index.files["m.py"].facts, text)
    assert sorted(n for f in fixes for n in f.removed) == ["os", "re"]
    assert apply_fixes(text, fixes) == "\x0cimport sys\n\nprint(sys)\n"


def test_an_explicit_re_export_and_a_shim_module_keep_their_imports() -> None:
    """flask 3.1.1 with its `# noqa` marks taken off: `blueprints.py`'s `BlueprintSetupState as
    BlueprintSetupState` (its docs autodoc it from there) and the one-line shim
    `helloworld/wsgi.py` (`flask run` finds `app` in it by name) were removed."""
    sources = {
        "pkg/blueprints.py": (
            "import os\nfrom .sansio import Blueprint as SansioBlueprint\n"
            "from .sansio import BlueprintSetupState as BlueprintSetupState\n"
            "from .sansio import Scaffold as Base\n\n\n"
            "class Blueprint(SansioBlueprint):\n    pass\n"
        ),
        "pkg/sansio.py": "class Blueprint:\n    pass\n\n\nclass BlueprintSetupState:\n    pass\n",
        "tests/helloworld/hello.py": "app = object()\n",
        "tests/helloworld/wsgi.py": '"""The app, for a WSGI server."""\nfrom hello import app\n',
    }
    assert _removed(sources) == {"pkg/blueprints.py": ["Base", "os"]}
