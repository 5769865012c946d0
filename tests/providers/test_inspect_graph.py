"""`impact` of unchanged files from an index whose uses are still being linked (pyindex/graph.py):
the import graph is whole before any use is linked, the answer then is the finished index's, and
a build hands that index to such a query (and only to such a query) before it finishes."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from asp_protocol.canonical import blob_id
from reference_host.providers.pyindex import InspectEngine, forklink
from reference_host.providers.pyindex.build import Builds
from reference_host.providers.pyindex.impact import ChangedFile, impact, unchanged
from reference_host.providers.pyindex.index import PythonIndex
from tests.providers.test_inspect_parallel import facts_of, generated_tree

SCOPES: list[Any] = ["workspace", "changeset", {"paths": ["src/gen"]}]


def answers(index: PythonIndex, paths: list[str]) -> list[Any]:
    """The impact of each path (and of all of them) as unchanged files, in every scope."""
    out = []
    for changed in [*([p] for p in paths), paths]:
        for scope in SCOPES:
            changes = [
                ChangedFile(p, "modify", before=index.files[p].facts, after=index.files[p].facts)
                for p in changed
            ]
            out.append(impact(index, changes, scope, None, 500))
    return out


@pytest.mark.parametrize("cores", [1, 2])
def test_impact_from_the_import_graph_is_the_finished_index_impact(
    cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forklink, "SPLIT_MIN_USES", 0)  # a forked child links the second half
    files = facts_of(generated_tree(40))
    paths = ["src/gen/m0.py", "src/gen/m13.py", "src/gen/__init__.py", "src/shop/money.py"]
    early: list[Any] = []
    refs_then: list[int] = []

    def graph(index: PythonIndex) -> None:
        refs_then.append(len(index.links.refs))
        early.extend(answers(index, paths))

    index = PythonIndex(files, cores=cores, graph=graph)
    assert refs_then == [0]  # no use linked yet
    assert any(body["impactedNodes"] for body, _ in early)
    assert any(edge["kind"] == "depends-on" for body, _ in early for edge in body["edges"])
    assert early == answers(index, paths)


def test_only_changes_naming_the_same_blob_are_answered_from_the_graph() -> None:
    same = {"path": "a.py", "kind": "modify", "before": "blob:1", "after": "blob:1"}
    assert unchanged({"changes": [same, {**same, "path": "b.py"}]})
    assert not unchanged({"changes": []})
    assert not unchanged({"changes": [same, {**same, "after": "blob:2"}]})
    assert not unchanged({"changes": [{**same, "kind": "delete", "after": None}]})
    assert not unchanged({"changes": [{"path": "a.py", "kind": "modify"}]})


class HeldEngine(InspectEngine):
    """Links as the engine does, but holds after telling the import graph until released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def index(self, tree: Any, cached: Any = None, cores: int = 1, graph: Any = None) -> Any:
        def held(index: PythonIndex) -> None:
            graph(index)
            assert self.release.wait(30)

        return super().index(tree, cached, cores, held if graph is not None else None)


@pytest.mark.anyio
async def test_a_build_gives_its_graph_to_an_impact_of_unchanged_files_only() -> None:
    sources = generated_tree(10)
    engine = HeldEngine()
    tree = {path: engine.add_blob(blob_id(data), data).blob for path, data in sources.items()}

    async def nothing(*_: object) -> None:
        return None

    builds = Builds(engine, wait=10.0)
    async with anyio.create_task_group() as tg:
        builds.attach(tg, lambda: None)  # type: ignore[arg-type,return-value]
        args = ("key", tree, False, nothing)
        graph = await builds.prepared(*args, graph=True)
        build = builds._builds["key"]
        assert build.graph is graph and not build.done.is_set()
        assert len(graph.index.links.refs) == 0 and graph.index.rdeps
        with pytest.raises(Exception, match="indexing"):  # any other query waits for the index
            await builds.prepared(*args, wait=0.05)
        engine.release.set()
        whole = await builds.prepared(*args)
        assert whole.index is graph.index and whole.tree == graph.tree
        assert build.graph is None and len(whole.index.links.refs) > 0
