"""The inspect verbs over a built index: symbols, references, callers, callees.

Each returns a graph envelope without `validAsOf` (the provider owns freshness) plus the set of
paths the answer was drawn from. `limit` bounds nodes; cutting anything sets `data.truncated`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any

from reference_host.providers.pyindex.index import PythonIndex, Ref, Target, def_id, split_id
from reference_host.providers.pyindex.nodes import GraphBuilder, def_node, edge, module_node

Graph = dict[str, Any]


def _contains(span: tuple[int, int, int, int], line: int, char: int) -> bool:
    start, end = (span[0], span[1]), (span[2], span[3])
    return start <= (line, char) <= end


def _walk(index: PythonIndex, target: Target, rest: list[str]) -> Target | None:
    for attr in rest:
        following = index.attr_of(target, attr)
        if following is None:
            return None
        target = following
    return target


def resolve_symbol(index: PythonIndex, ref: dict[str, Any]) -> list[str]:
    """Node ids a symbolRef names: an id (`path::Qual.name`, a module path, a dotted name or a bare
    name) or a `{path, position}` on a use or inside a definition."""
    if "path" in ref:
        return _at_position(index, str(ref["path"]), ref.get("position") or {})
    text = str(ref.get("id", "")).strip()
    if not text:
        return []
    if text in index.files:
        return [text]
    if "::" in text:
        path, qualname = split_id(text)
        if path not in index.files:
            return []
        if index.def_fact(text) is not None:
            return [text]
        parts = qualname.split(".")
        found = _walk(index, ("module", path), parts)
        return [found[1]] if found and found[0] not in ("instance", "super") else []
    parts = text.split(".")
    if all(p.isidentifier() for p in parts):
        for cut in range(len(parts), 0, -1):
            module = index.resolve_module(".".join(parts[:cut]))
            if module is None:
                continue
            found = _walk(index, ("module", module), parts[cut:])
            if found and found[0] not in ("instance", "super"):
                return [found[1]]
            break
    matches = index.by_name.get(text, [])
    if not matches and "." in text:
        matches = [
            i
            for i in index.by_name.get(parts[-1], [])
            if i.endswith("::" + text) or i.endswith("." + text)
        ]
    return sorted(matches)


def _at_position(index: PythonIndex, path: str, position: dict[str, Any]) -> list[str]:
    entry = index.files.get(path)
    if entry is None:
        return []
    line, char = int(position.get("line", 0)), int(position.get("char", 0))
    for use in entry.facts.uses:
        if _contains(use.span, line, char):
            target, _consumed = index.resolve_chain(path, use.scope, use.chain)
            if target is not None and target[0] not in ("instance", "super"):
                return [target[1]]
    inner = None
    for fact in entry.facts.defs:
        if _contains(fact.span, line, char) and (inner is None or fact.span >= inner.span):
            inner = fact
    return [def_id(path, inner.qualname)] if inner is not None else [path]


def _in_scope(path: str, scope: Any) -> bool:
    if not isinstance(scope, dict):
        return True
    for wanted in scope.get("paths") or []:
        wanted = str(wanted).strip("/")
        if not wanted or path == wanted or path.startswith(wanted + "/"):
            return True
    return False


def _ordered(refs: Iterable[Ref]) -> list[Ref]:
    return sorted(refs, key=lambda r: (r.path, r.span, r.source, r.target))


def symbols(
    index: PythonIndex, query: str, kinds: list[str] | None, limit: int
) -> tuple[Graph, set[str]]:
    """Definitions of a path, a directory, a module, or matching a name (exact, glob, substring)."""
    query = query.strip()
    wanted_kinds = set(kinds) if kinds else None
    stripped = query.strip("/")
    if stripped in ("", "*", "."):
        paths, mode = sorted(index.files), "workspace"
    elif stripped in index.files:
        paths, mode = [stripped], "path"
    elif any(p.startswith(stripped + "/") for p in index.files):
        paths, mode = sorted(p for p in index.files if p.startswith(stripped + "/")), "directory"
    elif (found := index.resolve_module(query)) is not None:
        paths, mode = [found], "module"
    else:
        return _symbols_by_name(index, query, wanted_kinds, limit)
    builder = GraphBuilder(index, limit)
    errors: dict[str, str] = {}
    for path in paths:
        entry = index.files[path]
        if entry.facts.error:
            errors[path] = entry.facts.error
        module = module_node(index, path)
        if wanted_kinds is None or "module" in wanted_kinds:
            builder.add_node(module)
        for fact in entry.facts.defs:
            node = def_node(path, fact, entry.facts, entry.is_test)
            if wanted_kinds is not None and node["kind"] not in wanted_kinds:
                continue
            if not builder.add_node(node):
                break
            parent = fact.qualname.rpartition(".")[0]
            builder.add_edge(edge("contains", def_id(path, parent) if parent else path, node["id"]))
        if builder.truncated:
            break
    data: dict[str, Any] = {"verb": "symbols", "mode": mode, "files": len(paths)}
    if errors:
        data["parseErrors"] = errors
    return builder.graph(data), builder.paths()


def _symbols_by_name(
    index: PythonIndex, query: str, kinds: set[str] | None, limit: int
) -> tuple[Graph, set[str]]:
    ids = list(index.by_name.get(query, []))
    mode = "name"
    if not ids and any(c in query for c in "*?["):
        mode = "glob"
        ids = [
            i
            for name, found in index.by_name.items()
            if fnmatch.fnmatchcase(name, query)
            for i in found
        ]
    if not ids:
        mode = "substring"
        lowered = query.lower()
        ids = [i for name, found in index.by_name.items() if lowered in name.lower() for i in found]
    builder = GraphBuilder(index, limit)
    for node_id in sorted(ids):
        found = index.def_fact(node_id)
        if found is None:
            continue
        entry, fact = found
        node = def_node(entry.path, fact, entry.facts, entry.is_test)
        if kinds is not None and node["kind"] not in kinds:
            continue
        if not builder.add_node(node):
            break
    return builder.graph({"verb": "symbols", "mode": mode, "query": query}), builder.paths()


def _unresolved(verb: str, symbol: dict[str, Any], limit: int) -> tuple[Graph, set[str]]:
    data = {"verb": verb, "symbols": [], "unresolved": True, "truncated": False, "limit": limit}
    return {"nodes": [], "edges": [], "data": {**data, "symbol": symbol}}, set()


def _unresolved_uses(
    index: PythonIndex, targets: list[str], data: dict[str, Any], calls_only: bool
) -> None:
    """Say so when uses that may be of a target were dropped: attribute uses of a method's name
    on values the index could not type. Such an answer is cut (`truncated`), not exhaustive."""
    found = []
    for target in targets:
        _path, qualname = split_id(target)
        if "." not in qualname:
            continue
        name = qualname.rpartition(".")[2]
        counts = index.unresolved.get(name)
        count = (counts[1] if calls_only else counts[0]) if counts else 0
        if count:
            samples = [f"{p}:{line}" for p, line in index.unresolved_at.get(name, [])]
            found.append({"name": name, "uses": count, "examples": samples})
    if found:
        data["unresolvedUses"] = found
        data["truncated"] = True
        data["incompleteReason"] = (
            "uses of these names on values of unknown type were not resolved and are not listed"
        )


def references(
    index: PythonIndex, symbol: dict[str, Any], scope: Any, limit: int
) -> tuple[Graph, set[str]]:
    """Every resolved use of the symbol: calls, imports, inheritance and plain name references."""
    targets = resolve_symbol(index, symbol)
    if not targets:
        return _unresolved("references", symbol, limit)
    builder = GraphBuilder(index, limit)
    for target in targets:
        builder.add_id(target)
    total = 0
    for target in targets:
        for ref in _ordered(index.refs_to.get(target, [])):
            if not _in_scope(ref.path, scope):
                continue
            total += 1
            if builder.add_id(ref.source):
                builder.add_edge(edge(ref.kind, ref.source, ref.target, ref.path, ref.span))
    data: dict[str, Any] = {"verb": "references", "symbols": targets, "references": total}
    return _finished(builder, index, targets, data, scope in (None, "workspace"), calls_only=False)


def _finished(
    builder: GraphBuilder,
    index: PythonIndex,
    targets: list[str],
    data: dict[str, Any],
    say_unresolved: bool,
    *,
    calls_only: bool,
) -> tuple[Graph, set[str]]:
    """The walk's graph and paths; with *say_unresolved*, what uses it could not resolve."""
    if say_unresolved:
        _unresolved_uses(index, targets, data, calls_only=calls_only)
    graph = builder.graph(data)
    if data.get("truncated"):
        graph["data"]["truncated"] = True
    return graph, builder.paths()


def _call_walk(
    index: PythonIndex, symbol: dict[str, Any], depth: int, limit: int, upward: bool
) -> tuple[Graph, set[str]]:
    verb = "callers" if upward else "callees"
    targets = resolve_symbol(index, symbol)
    if not targets:
        return _unresolved(verb, symbol, limit)
    builder = GraphBuilder(index, limit)
    frontier = [t for t in targets if builder.add_id(t)]
    seen = set(frontier)
    for _level in range(depth):
        following: list[str] = []
        for current in frontier:
            called = [current]
            if upward:  # a call of a method it overrides may run it: `self.handle()` in the base
                for base_method in overridden(index, current):
                    if base_method not in seen and builder.add_id(base_method):
                        seen.add(base_method)
                        entry, fact = index.def_fact(current) or (None, None)
                        where = (entry.path, fact.span) if entry and fact else (None, None)
                        builder.add_edge(edge("implements", current, base_method, *where))
                        called.append(base_method)
            refs = [
                ref
                for each in called
                for ref in (
                    index.refs_to.get(each, []) if upward else index.refs_from.get(each, [])
                )
            ]
            for ref in _ordered(refs):
                if ref.kind != "calls":
                    continue
                other = ref.source if upward else ref.target
                if not builder.add_id(other):
                    continue
                builder.add_edge(edge("calls", ref.source, ref.target, ref.path, ref.span))
                if other not in seen:
                    seen.add(other)
                    following.append(other)
        frontier = following
        if not frontier:
            break
    data: dict[str, Any] = {"verb": verb, "symbols": targets, "depth": depth}
    return _finished(builder, index, targets, data, upward, calls_only=True)


def overridden(index: PythonIndex, method_id: str) -> list[str]:
    """The methods of the ancestors of *method_id*'s class that it overrides (nearest first, each
    once). Dunder methods are left out: `super().__init__()` chains are not dispatch to them."""
    path, qualname = split_id(method_id)
    owner, _, name = qualname.rpartition(".")
    if not owner or (name.startswith("__") and name.endswith("__")):
        return []
    class_id = def_id(path, owner)
    if not index.is_class(class_id):
        return []
    found: list[str] = []
    queue, visited = list(index.bases(class_id)), {class_id}
    while queue:
        base = queue.pop(0)
        if base in visited:
            continue
        visited.add(base)
        base_path, base_qual = split_id(base)
        member = def_id(base_path, f"{base_qual}.{name}")
        if index.def_fact(member) is not None:
            found.append(member)
        queue.extend(index.bases(base))
    return found


def callers(
    index: PythonIndex, symbol: dict[str, Any], depth: int, limit: int
) -> tuple[Graph, set[str]]:
    return _call_walk(index, symbol, depth, limit, upward=True)


def callees(
    index: PythonIndex, symbol: dict[str, Any], depth: int, limit: int
) -> tuple[Graph, set[str]]:
    return _call_walk(index, symbol, depth, limit, upward=False)
