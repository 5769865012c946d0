"""Query-scoped answers while the whole index builds (pyindex/scoped.py, early.py): on generated
trees, every answer the scoped path gives is exactly the whole index's answer (nodes, edges, order,
counts, data), and where it cannot establish that it gives nothing instead of an approximation."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio
import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers.pyindex import InspectEngine, queries
from reference_host.providers.pyindex.build import Builds
from reference_host.providers.pyindex.diskcache import FactCache
from reference_host.providers.pyindex.early import Part, scoped_answer, seeds
from reference_host.providers.pyindex.facts import ModuleFacts
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.indexcache import store_links
from reference_host.providers.pyindex.linking import Links
from reference_host.providers.pyindex.words import Packed, Texts, searchable

TREE: dict[str, str] = {
    "pkg/__init__.py": (
        "from .core import Engine, helper\n"
        "from .core import Engine as Motor\n"
        "from . import util as tools\n"
    ),
    "pkg/core.py": (
        "from collections.abc import Iterator\n\n\n"
        "class Base:\n"
        "    def run(self, x):\n        return x\n\n"
        "    def __enter__(self):\n        return self\n\n"
        "    def __exit__(self, *exc):\n        return None\n\n\n"
        "class Engine(Base):\n"
        "    def start(self):\n        return self.run(1)\n\n\n"
        "def helper(v):\n    return Engine().start()\n\n\n"
        "def engines() -> Iterator[Engine]:\n    yield Engine()\n\n\n"
        "def make() -> 'Engine':\n    return Engine()\n"
    ),
    "pkg/util.py": "def helper(v):\n    return v\n\n\ndef run(v):\n    return v\n",
    "pkg/stars.py": "from pkg.core import *\n\n\ndef starred():\n    return helper(2)\n",
    "pkg/sub/__init__.py": "from ..core import Engine as Turbine\n",
    "pkg/sub/deep.py": "import pkg.core\nimport pkg.util as u\n\n\ndef deep():\n"
    "    pkg.core.helper(1)\n    pkg.core.Engine.run(None, 1)\n    return u.run(2)\n",
    "app/main.py": (
        "from pkg import Engine, Motor, tools\n"
        "from pkg.sub import Turbine\n"
        "from pkg.core import engines, make\n\n\n"
        "def use():\n"
        "    with Engine() as e:\n        e.run(1)\n"
        "    Motor().start()\n"
        "    Turbine().run(3)\n"
        "    tools.helper(4)\n"
        "    for each in engines():\n        each.start()\n"
        "    make().run(5)\n    Motor.start(Motor())\n\n\n"
        "class Client:\n"
        "    def __init__(self):\n        self.engine = Engine()\n\n"
        "    def go(self):\n        return self.engine.run(6)\n\n\n"
        "def blind(thing):\n    return thing.run(7)\n"
    ),
    "app/words.py": "# Engine is mentioned here only in a comment\nNAME = 'helper run start'\n",
    # a template method: the base calls `self.handle()`, which runs the subclass's override
    "pkg/tmpl.py": (
        "class Step:\n    def handle(self):\n        return 0\n\n    def serve(self):\n"
        "        return self.handle()\n\n\nclass Loud(Step):\n    def handle(self):\n"
        "        return 1\n\n\nclass Louder(Loud):\n    def handle(self):\n        return 2\n"
    ),
    "app/steps.py": (
        "from pkg.tmpl import Loud, Step\n\n\ndef drive(s: Step):\n    return s.handle()\n\n\n"
        "def direct():\n    return Loud().handle()\n"
    ),
    # names assigned from another name: a caller through them never spells the first name
    "pkg/aliases.py": "from pkg.core import helper, Engine\n\nrunner = helper\nMachine = Engine\n",
    "app/through.py": (
        "from pkg.aliases import runner, Machine\nfrom pkg import core\n\nfast = core.helper\n\n\n"
        "def relay():\n    runner(1)\n    fast(2)\n    return Machine().start()\n"
    ),
    "app/latin.py": "# -*- coding: latin-1 -*-\nfrom pkg.core import Engine\n\nA = 'caf\xe9'\n",
    "app/nfkc.py": "from pkg.core import helper\n\n\ndef \ufb01nd():\n    return h\u1d49lper(1)\n",
    "tests/test_core.py": (
        "from pkg.core import Engine, helper\n\n\n"
        "def test_start():\n    assert Engine().start() == 1\n    assert helper(0)\n"
    ),
}
BYTES = {
    path: text.encode("latin-1" if path == "app/latin.py" else "utf-8")
    for path, text in TREE.items()
}


def packed(data: dict[str, bytes]) -> Packed:
    out = Packed()
    out.add(data)
    return out


def _run(verb: str, params: dict[str, Any], index: PythonIndex) -> dict[str, Any]:
    if verb == "symbols":
        return queries.symbols(index, params["query"], params.get("kinds"), 1000)[0]
    if verb == "references":
        return queries.references(index, params["symbol"], params.get("scope"), 1000)[0]
    walk = queries.callers if verb == "callers" else queries.callees
    return walk(index, params["symbol"], params.get("depth", 1), 1000)[0]


def _both(
    files: dict[str, bytes], verb: str, params: dict[str, Any]
) -> tuple[str, str | None, Part]:
    """(the whole index's answer, the scoped one or None) as canonical JSON, and the part used."""
    full = InspectEngine().index_sources(files)
    tree = {path: blob_id(data) for path, data in files.items()}
    part = Part(InspectEngine(), tree, packed({blob_id(d): d for d in files.values()}))
    words = seeds(verb, params, tree)
    got = None
    if words is not None:  # a small tree: any share of it may be the part
        got = scoped_answer(part, words, lambda ix: _run(verb, params, ix), 1 << 30)
    whole = json.dumps(_run(verb, params, full), sort_keys=True)
    return whole, (json.dumps(got, sort_keys=True) if got is not None else None), part


def _every_query(files: dict[str, bytes]) -> list[tuple[str, dict[str, Any]]]:
    index = InspectEngine().index_sources(files)
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(files):
        entry = index.files[path]
        out.append(("references", {"symbol": {"id": path}}))
        for fact in entry.facts.defs:
            ident = f"{path}::{fact.qualname}"
            out.append(("references", {"symbol": {"id": ident}}))
            out.append(("callers", {"symbol": {"id": ident}}))
            out.append(("callers", {"symbol": {"id": ident}, "depth": 3}))
            out.append(("symbols", {"query": fact.name}))
    for dotted in ("pkg.Engine", "pkg.Motor", "pkg.sub.Turbine", "pkg.tools.helper", "Engine"):
        out.append(("references", {"symbol": {"id": dotted}}))
    out.append(("references", {"symbol": {"path": "app/main.py", "position": {"line": 9}}}))
    out.append(
        ("references", {"symbol": {"id": "pkg/core.py::Engine"}, "scope": {"paths": ["app"]}})
    )
    return out


def test_every_scoped_answer_is_the_whole_index_answer() -> None:
    answered = 0
    for verb, params in _every_query(BYTES):
        whole, scoped, _part = _both(BYTES, verb, params)
        if scoped is not None:
            assert scoped == whole, (verb, params)
            answered += 1
    assert answered >= 60  # the scoped path really answers most of them


@pytest.mark.parametrize(
    ("verb", "params", "expected_sources"),
    [
        # through `with X() as v`, an `as` alias re-exported by a package, a subpackage's alias,
        # a loop over an annotated iterator, a returned instance, an instance attribute
        (
            "callers",
            {"symbol": {"id": "pkg/core.py::Base.run"}},
            {"app/main.py::use", "app/main.py::Client.go", "pkg/core.py::Engine.start"},
        ),
        (
            "callers",
            {"symbol": {"id": "pkg/core.py::Engine.start"}},
            {"app/main.py::use", "pkg/core.py::helper", "tests/test_core.py::test_start"},
        ),
        # star import, NFKC spelling (`hᵉlper` is `helper`), import of a module attribute chain
        (
            "callers",
            {"symbol": {"id": "pkg/core.py::helper"}},
            {"pkg/stars.py::starred", "app/nfkc.py::find", "pkg/sub/deep.py::deep"},
        ),
        # through `runner = helper` in another module, and `fast = core.helper` in this one; a
        # class through `Machine = Engine`
        ("callers", {"symbol": {"id": "pkg/core.py::helper"}}, {"app/through.py::relay"}),
        ("callers", {"symbol": {"id": "pkg/core.py::Engine.start"}}, {"app/through.py::relay"}),
        # an override is reached through the methods it overrides, each level of the hierarchy
        (
            "callers",
            {"symbol": {"id": "pkg/tmpl.py::Louder.handle"}},
            {"pkg/tmpl.py::Step.serve", "app/steps.py::drive"},
        ),
    ],
)
def test_the_shapes_the_index_resolves_are_answered_by_the_scoped_path(
    verb: str, params: dict[str, Any], expected_sources: set[str]
) -> None:
    whole, scoped, _part = _both(BYTES, verb, params)
    assert scoped == whole
    assert expected_sources <= {e["from"] for e in json.loads(whole)["edges"]}


def test_an_override_says_which_method_it_overrides_and_a_base_gains_no_caller() -> None:
    whole = json.loads(_both(BYTES, "callers", {"symbol": {"id": "pkg/tmpl.py::Loud.handle"}})[0])
    edges = {(e["kind"], e["from"], e["to"]) for e in whole["edges"]}
    assert ("implements", "pkg/tmpl.py::Loud.handle", "pkg/tmpl.py::Step.handle") in edges
    assert ("calls", "pkg/tmpl.py::Step.serve", "pkg/tmpl.py::Step.handle") in edges
    base = json.loads(_both(BYTES, "callers", {"symbol": {"id": "pkg/tmpl.py::Step.handle"}})[0])
    # `Loud().handle()` runs Loud's own method: not a caller of Step.handle
    assert "app/steps.py::direct" not in {e["from"] for e in base["edges"]}
    assert not [e for e in base["edges"] if e["kind"] == "implements"]


def test_only_the_files_spelling_the_names_and_what_they_reach_are_parsed() -> None:
    whole, scoped, part = _both(BYTES, "references", {"symbol": {"id": "pkg/util.py::run"}})
    assert scoped == whole
    parsed = {path for path, blob in part.tree.items() if blob in part.facts}
    assert "app/latin.py" not in parsed and "tests/test_core.py" not in parsed


def test_a_string_only_mention_costs_a_parse_but_never_changes_the_answer() -> None:
    whole, scoped, part = _both(BYTES, "references", {"symbol": {"id": "pkg/core.py::Engine"}})
    assert scoped == whole
    assert part.tree["app/words.py"] in part.facts


def test_a_cycle_of_star_imports_gives_no_scoped_answer() -> None:
    files = {
        "a.py": b"from b import *\n\n\ndef f():\n    return g()\n",
        "b.py": b"from a import *\n\n\ndef k():\n    return g()\n",
        "c.py": b"def g():\n    return 1\n",
    }
    whole, scoped, _part = _both(files, "references", {"symbol": {"id": "c.py::g"}})
    assert scoped is None and json.loads(whole)["data"]["symbols"] == ["c.py::g"]


def test_whole_tree_listings_globs_and_directories_are_not_scoped() -> None:
    tree = {path: blob_id(data) for path, data in BYTES.items()}
    assert seeds("symbols", {"query": ""}, tree) is None
    assert seeds("symbols", {"query": "*"}, tree) is None
    assert seeds("symbols", {"query": "Eng*"}, tree) is None
    assert seeds("symbols", {"query": "pkg/sub"}, tree) is None
    assert seeds("impact", {"paths": ["pkg/core.py"]}, tree) is None
    # a substring query needs every name of the tree: enumerating them is refused
    whole, scoped, _part = _both(BYTES, "symbols", {"query": "ngin"})
    assert scoped is None and json.loads(whole)["nodes"]


def test_a_blob_whose_bytes_do_not_match_its_id_gives_no_scoped_answer() -> None:
    tree = {path: blob_id(data) for path, data in BYTES.items()}
    data = {blob_id(d): d for d in BYTES.values()}
    data[tree["pkg/util.py"]] = b"def run(v):\n    return v\n"
    part = Part(InspectEngine(), tree, packed(data))
    params = {"symbol": {"id": "pkg/util.py::run"}}
    assert scoped_answer(part, {"run"}, lambda ix: _run("references", params, ix), 1 << 30) is None


def test_a_part_over_the_size_bound_gives_no_scoped_answer() -> None:
    tree = {path: blob_id(data) for path, data in BYTES.items()}
    part = Part(InspectEngine(), tree, packed({blob_id(d): d for d in BYTES.values()}))
    params = {"symbol": {"id": "pkg/core.py::Engine"}}
    answer = scoped_answer(part, {"Engine"}, lambda ix: _run("references", params, ix), 64)
    assert answer is None


def test_words_are_found_as_python_reads_identifiers() -> None:
    texts = Texts(packed({"b": b"helpers = 1\n", "a": "x = h\u1d49lper\n".encode()}))
    texts.data.add({"c": b"\xff\xfe", "d": b"help = helper_x + helper"})
    assert texts.holds("a", "helper")  # NFKC
    assert not texts.holds("b", "helper")  # a longer word
    assert texts.holds("c", "helper")  # cannot be decoded: may hold anything
    assert texts.holds("d", "helper") and not texts.holds("d", "help_")  # inside one buffer
    assert not texts.holds("b", "x") and texts.size("d") == 24
    texts.data.add({"e": b""})
    assert not texts.holds("e", "helper") and texts.data["e"] == b"" and texts.size("e") == 0
    assert searchable("# -*- coding: latin-1 -*-\nx = '\xe9'\n".encode("latin-1")) is not None


class PlantingCache(FactCache):
    """A cache that gains an index entry for *tree* while the build is reading (as another
    provider process sharing the cache could write one)."""

    def __init__(self, root: Path, tree: dict[str, str]) -> None:
        super().__init__(root, "build")
        self.tree = tree

    def load_many(self, blobs: Iterable[str]) -> dict[str, ModuleFacts]:
        store_links(self, InspectEngine.tree_key(self.tree), Links())
        return super().load_many(blobs)


class Reads:
    def __init__(self, content: dict[str, bytes]) -> None:
        self.content = content

    async def read_each(self, ids: list[str]) -> tuple[dict[str, bytes], dict[str, Any]]:
        return {i: self.content[i] for i in ids}, {}


@pytest.mark.anyio
async def test_a_build_decides_once_whether_its_index_comes_from_the_cache(
    tmp_path: Path,
) -> None:
    """What an early answer says (`indexFromCache: false`, `factsFromCache`) must be what the
    build then does: an index entry that appears while it reads is not adopted by it."""
    tree = {path: blob_id(data) for path, data in BYTES.items()}
    content = {blob_id(d): d for d in BYTES.values()}
    builds = Builds(InspectEngine(), wait=30.0, cache=PlantingCache(tmp_path, tree))
    async with anyio.create_task_group() as tg:
        builds.attach(tg, lambda: Reads(content))  # type: ignore[arg-type, return-value]

        async def report(percentage: int, message: str) -> None:
            return None

        prepared = await builds.prepared("key", tree, False, report)
        tg.cancel_scope.cancel()
    assert prepared.index_from_cache is False and prepared.from_cache == 0
    assert prepared.index.refs_to  # resolved here, not the planted empty tables


def test_a_scoped_answer_leaves_no_reference_cycles() -> None:
    """Builds run with the cyclic collector paused and freeze what exists after them, so a
    scoped index caught in a cycle would stay in memory for good."""
    tree = {path: blob_id(data) for path, data in BYTES.items()}
    part = Part(InspectEngine(), tree, packed({blob_id(d): d for d in BYTES.values()}))
    params = {"symbol": {"id": "pkg/core.py::Base.run"}}
    gc.collect()
    gc.disable()
    try:
        for _ in range(2):
            answer = scoped_answer(part, {"run"}, lambda ix: _run("callers", params, ix), 1 << 30)
            assert answer is not None
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_forked_child_sends_its_value_back_and_a_failed_one_gives_none() -> None:
    from reference_host.providers.pyindex.forklink import in_child

    assert in_child(lambda: ("answer", {"nodes": [1, "a"], "data": None}), 8.0) == (
        "answer",
        {"nodes": [1, "a"], "data": None},
    )

    def fails() -> None:
        raise RuntimeError("in the child")

    assert in_child(fails, 8.0) is None
    assert in_child(lambda: object(), 8.0) is None  # nothing marshal can send
    if os.path.isdir("/proc/self/fd"):  # the child holds none of this process's pipes to the host
        assert in_child(lambda: [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1)], 8.0) == [
            os.devnull,
            os.devnull,
        ]
