"""`sense/impact`: what a set of changed paths reaches — importers (transitively), callers, tests.

Over-inclusive by design (the host hands `impactedFiles` to check providers), but only along
imports that run: a module is impacted when it imports a changed module at run time, directly or
through other impacted modules. Importing `a.b.c` is an import of `c`, not of every module the
packages `a` and `a.b` import; a name imported from a package resolves to the module that defines
it (through the `__init__`'s re-exports), so the importer depends on that module. A package
`__init__` reached because it imports a changed module passes the impact on only to modules that
import the package as a whole (`import pkg`, `from . import pkg`). Imports under
`if TYPE_CHECKING:` never run: such importers of a changed or impacted module are listed as
nodes joined by a `depends-on` edge, after the runtime ones, are not in `impactedFiles` and are
not followed further. README, Inspect section, says the same for users.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from reference_host.providers.pyindex.facts import DefFact, ModuleFacts
from reference_host.providers.pyindex.index import PythonIndex, def_id
from reference_host.providers.pyindex.modules import is_python_path, is_test_path, module_names
from reference_host.providers.pyindex.nodes import (
    Edge,
    Node,
    def_node,
    edge,
    file_node,
    location,
    module_node,
)

DEFAULT_CALLER_DEPTH = 2


@dataclass(slots=True)
class ChangedFile:
    """One change of a ChangeSet with the parsed before/after content the provider could read."""

    path: str
    kind: str
    from_path: str | None = None
    before: ModuleFacts | None = None
    after: ModuleFacts | None = None


def _changed_defs(
    before: ModuleFacts | None, after: ModuleFacts | None
) -> list[tuple[DefFact, ModuleFacts]]:
    """Definitions added, removed or edited between two versions (compared by source shape)."""
    old = {d.qualname: d for d in before.defs} if before else {}
    new = {d.qualname: d for d in after.defs} if after else {}
    result: list[tuple[DefFact, ModuleFacts]] = []
    if after is not None:
        for qualname, fact in new.items():
            previous = old.get(qualname)
            if previous is None or previous.shape != fact.shape:
                result.append((fact, after))
    if before is not None:
        result.extend((fact, before) for q, fact in old.items() if q not in new)
    return result


def _fresh_module_node(index: PythonIndex, path: str, facts: ModuleFacts | None) -> Node:
    name = module_names([*index.files, path]).get(path)
    lines = facts.lines if facts else 1
    return {
        "id": path,
        "kind": "module",
        "name": name.primary if name else path.rpartition("/")[2][:-3],
        "location": location(path, (0, 0, max(lines, 1) - 1, 0)),
        "exported": True,
        "test": is_test_path(path),
    }


def unchanged(changeset: dict[str, Any]) -> bool:
    """Whether every change of *changeset* names the same blob before and after (an impact of
    `paths`): no definition changes, so `impact` reads no reference, only the files and the
    import graph (the answer an index gives once its imports are linked, graph.py)."""
    changes = changeset.get("changes") or ()
    return bool(changes) and all(
        change.get("kind") == "modify"
        and isinstance(change.get("before"), str)
        and change.get("before") == change.get("after")
        for change in changes
    )


def _in_scope(path: str, scope: Any, changed: set[str]) -> bool:
    if scope == "changeset":
        return path in changed
    if isinstance(scope, dict):
        for wanted in scope.get("paths") or []:
            wanted = str(wanted).strip("/")
            if not wanted or path == wanted or path.startswith(wanted + "/"):
                return True
        return False
    return True


class _Collector:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ids: set[str] = set()
        self.count = 0
        self.truncated = False

    def take(self, bucket: list[Node], node: Node) -> bool:
        if node["id"] in self.ids:
            return True
        if self.count >= self.limit:
            self.truncated = True
            return False
        self.ids.add(node["id"])
        self.count += 1
        bucket.append(node)
        return True


def impact(
    index: PythonIndex, changes: list[ChangedFile], scope: Any, depth: int | None, limit: int
) -> tuple[dict[str, Any], set[str]]:
    """The impactResult body (without `validAsOf`) and the paths it was drawn from."""
    collector = _Collector(limit)
    changed_nodes: list[Node] = []
    impacted_nodes: list[Node] = []
    changed_paths: list[str] = []
    seeds: list[str] = []
    changed_def_ids: list[str] = []
    for change in changes:
        for path in (change.from_path, change.path):
            if path and path not in changed_paths:
                changed_paths.append(path)
            if path and path in index.files and path not in seeds:
                seeds.append(path)
        if not is_python_path(change.path):
            collector.take(changed_nodes, file_node(change.path))
            continue
        if change.path in index.files:
            collector.take(changed_nodes, module_node(index, change.path))
        else:
            collector.take(changed_nodes, _fresh_module_node(index, change.path, change.after))
        test_file = is_test_path(change.path)
        if change.before is None and change.kind != "create":
            known = index.files.get(change.from_path or change.path)
            change.before = known.facts if known is not None else None
        for fact, facts in _changed_defs(change.before, change.after):
            node_path = (
                change.from_path if facts is change.before and change.from_path else change.path
            )
            collector.take(changed_nodes, def_node(node_path, fact, facts, test_file))
            changed_def_ids.append(def_id(node_path, fact.qualname))
    changed_set = set(changed_paths)

    # modules importing a changed module, breadth first, bounded by depth
    distance = {seed: 0 for seed in seeds}
    origin = {seed: seed for seed in seeds}
    edges: list[Edge] = []
    queue = deque(seeds)
    order: list[str] = []
    while queue:
        current = queue.popleft()
        if depth is not None and distance[current] >= depth:
            continue
        entry = index.files[current]
        passes_on = current in distance and distance[current] == 0
        if entry.name is not None and entry.name.is_package and not passes_on:
            importers = index.module_rdeps.get(current, set())
        else:
            importers = index.rdeps.get(current, set())
        for importer in sorted(importers):
            edges.append(edge("imports", importer, current))
            if importer not in distance:
                distance[importer] = distance[current] + 1
                origin[importer] = origin[current]
                order.append(importer)
                queue.append(importer)
    impacted_files = [p for p in changed_paths]
    tests: list[str] = []
    for path in order:
        if path in changed_set or not _in_scope(path, scope, changed_set):
            continue
        if not collector.take(impacted_nodes, module_node(index, path)):
            break
        impacted_files.append(path)
        if index.files[path].is_test:
            tests.append(path)

    # importers under `if TYPE_CHECKING:` only: shown, not impacted at run time, not followed
    type_only = sorted(
        {
            importer
            for module in (*seeds, *order)
            for importer in index.type_rdeps.get(module, ())
            if importer not in distance and _in_scope(importer, scope, changed_set)
        }
    )
    for importer in type_only:
        if not collector.take(impacted_nodes, module_node(index, importer)):
            break
        for module in (*seeds, *order):
            if importer in index.type_rdeps.get(module, ()):
                edges.append(edge("depends-on", importer, module))

    # functions calling a changed definition (the tests among them are the most direct ones)
    frontier = [i for i in changed_def_ids if index.def_fact(i) is not None]
    seen = set(frontier)
    for _level in range(depth if depth is not None else DEFAULT_CALLER_DEPTH):
        following: list[str] = []
        for target in frontier:
            for ref in index.refs_to.get(target, []):
                if ref.kind != "calls" or not _in_scope(ref.path, scope, changed_set):
                    continue
                if ref.source not in seen:
                    seen.add(ref.source)
                    found = index.def_fact(ref.source)
                    if found is None:
                        continue  # a module-level call: its module is already in the import closure
                    if not collector.take(
                        impacted_nodes,
                        def_node(found[0].path, found[1], found[0].facts, found[0].is_test),
                    ):
                        continue
                    following.append(ref.source)
                    if ref.path not in impacted_files:
                        impacted_files.append(ref.path)
                edges.append(edge("calls", ref.source, ref.target, ref.path, ref.span))
        frontier = following
    edges.extend(edge("tested-by", origin[test], test) for test in tests)
    kept = [e for e in edges if e["from"] in collector.ids and e["to"] in collector.ids]
    if len(kept) > limit * 4:
        kept, collector.truncated = kept[: limit * 4], True
    result = {
        "changedNodes": changed_nodes,
        "impactedNodes": impacted_nodes,
        "impactedFiles": impacted_files,
        "edges": kept,
        "truncated": collector.truncated,
    }
    return result, set(impacted_files)
