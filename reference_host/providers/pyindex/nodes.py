"""Graph-envelope nodes and edges (`sense-graph.schema.json`) built from index facts."""

from __future__ import annotations

from typing import Any

from reference_host.providers.pyindex.facts import DefFact, ModuleFacts, Span
from reference_host.providers.pyindex.index import PythonIndex, def_id, split_id

Node = dict[str, Any]
Edge = dict[str, Any]


def location(path: str, span: Span | None = None) -> dict[str, Any]:
    if span is None:
        return {"path": path}
    return {
        "path": path,
        "range": {
            "start": {"line": span[0], "char": span[1]},
            "end": {"line": span[2], "char": span[3]},
        },
    }


def _public(part: str) -> bool:
    return not part.startswith("_") or (part.startswith("__") and part.endswith("__"))


def is_test_def(fact: DefFact, test_file: bool) -> bool:
    """pytest collection: `test*` functions at module level or in `Test*` classes of a test file."""
    if not test_file or fact.kind != "function" or not fact.name.startswith("test"):
        return False
    owner = fact.qualname.rpartition(".")[0]
    return not owner or ("." not in owner and owner.startswith("Test"))


def def_node(path: str, fact: DefFact, facts: ModuleFacts, test_file: bool) -> Node:
    parts = fact.qualname.split(".")
    exported = all(_public(p) for p in parts)
    if exported and facts.all_names is not None and parts[0] not in facts.all_names:
        exported = False
    test = is_test_def(fact, test_file)
    return {
        "id": def_id(path, fact.qualname),
        "kind": "test" if test else fact.kind,
        "name": fact.name,
        "location": location(path, fact.span),
        "exported": exported,
        "test": test or (test_file and fact.kind == "class" and fact.name.startswith("Test")),
    }


def module_node(index: PythonIndex, path: str) -> Node:
    entry = index.files[path]
    name = entry.name.primary if entry.name is not None else path.rpartition("/")[2][:-3]
    return {
        "id": path,
        "kind": "module",
        "name": name,
        "location": location(path, (0, 0, max(entry.facts.lines, 1) - 1, 0)),
        "exported": not name.rpartition(".")[2].startswith("_") or name.endswith("__init__"),
        "test": entry.is_test,
    }


def file_node(path: str) -> Node:
    return {"id": path, "kind": "file", "name": path.rpartition("/")[2], "location": location(path)}


def node_for(index: PythonIndex, node_id: str) -> Node | None:
    """The node of a definition id or a module path indexed in *index*."""
    if node_id in index.files:
        return module_node(index, node_id)
    found = index.def_fact(node_id)
    if found is None:
        return None
    entry, fact = found
    return def_node(entry.path, fact, entry.facts, entry.is_test)


def edge(
    kind: str, source: str, target: str, path: str | None = None, span: Span | None = None
) -> Edge:
    result: Edge = {"kind": kind, "from": source, "to": target}
    if path is not None:
        result["location"] = location(path, span)
    return result


def node_path(node_id: str) -> str:
    return split_id(node_id)[0]


class GraphBuilder:
    """Collects unique nodes and edges up to a node limit, remembering whether anything was cut."""

    def __init__(self, index: PythonIndex, limit: int) -> None:
        self.index = index
        self.limit = limit
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self._edge_keys: set[tuple[str, str, str, str]] = set()
        self.truncated = False

    def add_node(self, node: Node | None) -> bool:
        """Add *node*; False when the limit stopped it (an already present node is True)."""
        if node is None:
            return False
        if node["id"] in self.nodes:
            return True
        if len(self.nodes) >= self.limit:
            self.truncated = True
            return False
        self.nodes[node["id"]] = node
        return True

    def add_id(self, node_id: str) -> bool:
        return node_id in self.nodes or self.add_node(node_for(self.index, node_id))

    def add_edge(self, item: Edge) -> None:
        if item["from"] not in self.nodes or item["to"] not in self.nodes:
            return
        key = (item["kind"], item["from"], item["to"], repr(item.get("location")))
        if key in self._edge_keys:
            return
        if len(self.edges) >= self.limit * 4:
            self.truncated = True
            return
        self._edge_keys.add(key)
        self.edges.append(item)

    def paths(self) -> set[str]:
        return {n["location"]["path"] for n in self.nodes.values()}

    def graph(self, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "nodes": list(self.nodes.values()),
            "edges": self.edges,
            "data": {**data, "truncated": self.truncated, "limit": self.limit},
        }
