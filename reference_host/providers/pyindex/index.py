"""A whole-workspace Python index: module table, name resolution across imports, reference edges.

Built from per-blob facts in one pass; every use is resolved eagerly so that queries on a cached
index only walk dictionaries. Resolution is static and best-effort: imports (absolute, relative,
aliased, re-exported, star), `self`/`cls` attributes, base classes, variables assigned once from
a class call or annotated with a class, and names assigned once from another name (`run = f`). Anything else is left unresolved rather than guessed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from reference_host.providers.pyindex.chains import CALL
from reference_host.providers.pyindex.facts import (
    Binding,
    DefFact,
    ModuleFacts,
)
from reference_host.providers.pyindex.forklink import link_files
from reference_host.providers.pyindex.linking import Links, Ref, def_id, split_id
from reference_host.providers.pyindex.modules import ModuleName, is_test_path, module_names
from reference_host.providers.pyindex.typed import returned, typed_attr

__all__ = ["FileEntry", "PythonIndex", "Ref", "Target", "def_id", "split_id"]

Target = tuple[str, str]  # ("module", path) | ("def", id) | ("instance" | "super", class id)
_MAX_DEPTH = 24


@dataclass(slots=True)
class FileEntry:
    path: str
    blob: str
    facts: ModuleFacts
    name: ModuleName | None
    is_test: bool
    has_star: bool = False
    defs_by_qual: dict[str, DefFact] = field(default_factory=dict)


class PythonIndex:
    """Resolved facts of one tree (a set of (path, blob) pairs)."""

    def __init__(
        self,
        files: dict[str, tuple[str, ModuleFacts]],
        names: dict[str, ModuleName] | None = None,
        links: Links | None = None,
        cores: int = 1,
        graph: Callable[[PythonIndex], None] | None = None,
    ) -> None:
        """*names*: the module names of a larger tree these files belong to (one file's index);
        *links*: the resolved tables of this very tree, read back from the persistent cache;
        *cores*: how many processes may resolve its uses (forklink.py); *graph*: told when the
        import graph is whole, before the uses are linked (not when *links* are given)."""
        names = module_names(files) if names is None else names
        self.files: dict[str, FileEntry] = {}
        self.modules: dict[str, list[tuple[str, bool]]] = defaultdict(list)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self._defs: dict[str, tuple[FileEntry, DefFact]] = {}
        for path in sorted(files):
            entry = self.hold(path, *files[path], names.get(path))
            if entry.name is not None:
                self.modules[entry.name.primary].append((path, True))
                for alias in entry.name.aliases:
                    self.modules[alias].append((path, False))
        self._member_memo: dict[tuple[str, str], Target | None] = {}
        self._attr_memo: dict[tuple[str, str], Target | None] = {}
        self._bases_memo: dict[str, list[str]] = {}
        self._import_memo: dict[tuple[str, Binding], Target | None] = {}
        self.typed_memo: dict[tuple[str, str], Target | None] = {}
        # what every use and import resolved to: computed here, or adopted from a cached index of
        # the same tree (see linking.py); the index reads the tables through these names
        self.links = links if links is not None else Links()
        self.refs_to = self.links.refs_to
        self.refs_from = self.links.refs_from
        self.deps = self.links.deps
        self.rdeps = self.links.rdeps
        self.module_rdeps = self.links.module_rdeps
        self.type_rdeps = self.links.type_rdeps
        self.unresolved = self.links.unresolved
        self.unresolved_at = self.links.unresolved_at
        if links is None:
            link_files(self, list(self.files.values()), cores, graph)
            self.forget_resolutions()

    def hold(self, path: str, blob: str, facts: ModuleFacts, name: ModuleName | None) -> FileEntry:
        """Add one file's entry and definitions (not its module name: see `modules`)."""
        entry = FileEntry(path, blob, facts, name, is_test_path(path))
        entry.defs_by_qual = {d.qualname: d for d in facts.defs}
        entry.has_star = any(i.name == "*" and i.scope == 0 for i in facts.imports)
        self.files[path] = entry
        for d in facts.defs:
            ident = def_id(path, d.qualname)
            self.by_name[d.name].append(ident)
            self._defs.setdefault(ident, (entry, entry.defs_by_qual[d.qualname]))
        return entry

    def forget_resolutions(self) -> None:
        """Drop the resolution memos the build filled (about 9 MiB on Django): the tables hold
        what the build resolved, and the few lookups a query makes are resolved again lazily,
        exactly as they are on an index whose tables came from the cache."""
        self._member_memo.clear()
        self._attr_memo.clear()
        self._bases_memo.clear()
        self._import_memo.clear()
        self.typed_memo.clear()

    # -- lookups ----------------------------------------------------------------------------
    def def_fact(self, node_id: str) -> tuple[FileEntry, DefFact] | None:
        return self._defs.get(node_id)

    def is_class(self, node_id: str) -> bool:
        found = self._defs.get(node_id)
        return found is not None and found[1].kind == "class"

    def resolve_module(self, name: str, importer: str | None = None) -> str | None:
        candidates = self.modules.get(name)
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0][0]
        importer_dir = (importer or "").rpartition("/")[0].split("/")

        def closeness(item: tuple[str, bool]) -> tuple[bool, int, str]:
            parts = item[0].split("/")
            shared = 0
            for a, b in zip(parts, importer_dir, strict=False):
                if a != b:
                    break
                shared += 1
            return (item[1], shared, item[0])

        return max(candidates, key=closeness)[0]

    def absolute_module(self, path: str, module: str, level: int) -> str | None:
        """The dotted name a (possibly relative) import names, seen from *path*."""
        if level == 0:
            return module
        name = self.files[path].name
        if name is None:
            return None
        parts = name.package.split(".") if name.package else []
        up = level - 1
        if up > len(parts):
            return None
        base = parts[: len(parts) - up]
        if module:
            base.append(module)
        return ".".join(base)

    # -- resolution -------------------------------------------------------------------------
    def module_attr(self, path: str, attr: str, depth: int = 0) -> Target | None:
        """What `module.attr` is: a definition, a re-exported import, a submodule, a star import."""
        key = (path, attr)
        if key in self._attr_memo:
            return self._attr_memo[key]
        if depth > _MAX_DEPTH:
            return None
        self._attr_memo[key] = None  # cycle guard while resolving
        entry = self.files[path]
        result: Target | None = None
        binding = entry.facts.scopes[0].bindings.get(attr)
        if binding is not None and binding[0] != "local":
            result = self.binding_target(path, 0, binding, depth + 1)
        if result is None and entry.name is not None and entry.name.is_package:
            sub = self.resolve_module(f"{entry.name.primary}.{attr}", path)
            if sub is not None:
                result = ("module", sub)
        if result is None and binding is None and not attr.startswith("_"):
            for imp in entry.facts.imports:
                if imp.name == "*" and imp.scope == 0:
                    absname = self.absolute_module(path, imp.module, imp.level)
                    star = self.resolve_module(absname, path) if absname else None
                    if star is not None and star != path:
                        result = self.module_attr(star, attr, depth + 1)
                        if result is not None:
                            break
        self._attr_memo[key] = result
        return result

    def import_target(self, path: str, binding: Binding, depth: int) -> Target | None:
        """What an import binding names; memoized per (file, binding) like `module_attr` (most
        uses of a module start at one of its imports)."""
        key = (path, binding)
        if key in self._import_memo:
            return self._import_memo[key]
        result = self._import_memo[key] = self._import_target(path, binding, depth)
        return result

    def _import_target(self, path: str, binding: Binding, depth: int) -> Target | None:
        _, module, attr, level = binding
        absname = self.absolute_module(path, str(module), int(level))  # type: ignore[call-overload]
        if absname is None:
            return None
        if attr is None:
            found = self.resolve_module(absname, path) if absname else None
            return ("module", found) if found else None
        attr = str(attr)
        if absname:
            holder = self.resolve_module(absname, path)
            if holder is not None:
                target = self.module_attr(holder, attr, depth + 1)
                if target is not None:
                    return target
        sub = self.resolve_module(f"{absname}.{attr}" if absname else attr, path)
        return ("module", sub) if sub else None

    def binding_target(self, path: str, scope: int, binding: Binding, depth: int) -> Target | None:
        kind = binding[0]
        if kind == "def":
            return ("def", def_id(path, str(binding[1])))
        if kind == "import":
            return self.import_target(path, binding, depth)
        if kind in ("instance", "element") and depth < _MAX_DEPTH:
            chain = binding[1]
            assert isinstance(chain, tuple)
            target, consumed = self.resolve_chain(path, scope, chain, depth + 1)
            if not target or consumed != len(chain) or target[0] != "def":
                return None
            if kind == "instance" and self.is_class(target[1]):
                return ("instance", target[1])
            return returned(self, target[1], element=kind == "element", depth=depth + 1)
        if kind == "alias" and depth < _MAX_DEPTH:
            chain = binding[1]
            assert isinstance(chain, tuple)
            target, consumed = self.resolve_chain(path, scope, chain, depth + 1)
            return target if target is not None and consumed == len(chain) else None
        return None

    def lookup_name(self, path: str, scope_index: int, name: str, depth: int = 0) -> Target | None:
        """Python's LEGB lookup through the recorded scopes (class bodies are not enclosing)."""
        scopes = self.files[path].facts.scopes
        index, first = scope_index, True
        while index >= 0:
            scope = scopes[index]
            if scope.kind == "class" and not first:
                index = scope.parent
                continue
            if scope.self_name == name and scope.class_scope >= 0:
                return ("instance", def_id(path, scopes[scope.class_scope].owner))
            binding = scope.bindings.get(name)
            if binding is not None:
                return self.binding_target(path, index, binding, depth + 1)
            first = False
            index = scope.parent
        if self.files[path].has_star:
            return self.module_attr(path, name, depth + 1)
        return None

    def attr_of(self, target: Target, attr: str, depth: int = 0) -> Target | None:
        """`target.attr`; the CALL marker turns a class into an instance and stops anything else."""
        kind, ident = target
        if attr == CALL:
            if kind != "def":
                return None
            if self.is_class(ident):
                return ("instance", ident)
            return returned(self, ident, element=False, depth=depth + 1)
        if kind == "module":
            return self.module_attr(ident, attr, depth + 1)
        if kind == "super":
            for base in self.bases(ident):
                found = self.class_member(base, attr)
                if found is not None:
                    return found
            return None
        if kind == "instance" or self.is_class(ident):
            return self.class_member(ident, attr)
        return None

    def _super(self, path: str, scope_index: int) -> Target | None:
        """`super()` inside a method: the enclosing class, whose bases answer attribute lookups."""
        scopes = self.files[path].facts.scopes
        index = scope_index
        while index >= 0:
            scope = scopes[index]
            if scope.class_scope >= 0:
                return ("super", def_id(path, scopes[scope.class_scope].owner))
            index = scope.parent
        return None

    def resolve_chain(
        self,
        path: str,
        scope: int,
        chain: tuple[str, ...],
        depth: int = 0,
        through: list[str] | None = None,
    ) -> tuple[Target | None, int]:
        """Resolve `a.b.c` as far as static knowledge goes: (deepest target, names consumed).
        *through* collects the definitions (classes) whose member the chain then looked up
        (`C` of `C.make()`): the use names them too."""
        if chain[0] == "super" and len(chain) > 2 and chain[1] == CALL:
            target, consumed = self._super(path, scope), 2
        else:
            target, consumed = self.lookup_name(path, scope, chain[0], depth), 1
        if target is None:
            return None, 0
        for attr in chain[consumed:]:
            following = self.attr_of(target, attr, depth)
            if following is None:
                break
            if through is not None and target[0] == "def":
                if attr == CALL:  # `C.f().x`: `C.f()` is a use of its own, which names C
                    through.clear()
                else:
                    through.append(target[1])
            target, consumed = following, consumed + 1
        return target, consumed

    def bases(self, class_id: str) -> list[str]:
        if class_id in self._bases_memo:
            return self._bases_memo[class_id]
        self._bases_memo[class_id] = []
        found = self.def_fact(class_id)
        result: list[str] = []
        if found is not None:
            entry, fact = found
            for chain in fact.bases:
                target, consumed = self.resolve_chain(entry.path, fact.parent_scope, chain)
                if (
                    target
                    and consumed == len(chain)
                    and target[0] == "def"
                    and self.is_class(target[1])
                ):
                    result.append(target[1])
        self._bases_memo[class_id] = result
        return result

    def class_member(
        self, class_id: str, attr: str, seen: frozenset[str] = frozenset()
    ) -> Target | None:
        """`Class.attr` through the class body, then its resolved bases (depth-first MRO); an
        outermost lookup (no *seen*) is memoized, inner ones depend on the classes already seen."""
        if not seen:
            key = (class_id, attr)
            if key in self._member_memo:
                return self._member_memo[key]
            self._member_memo[key] = None  # cycle guard while resolving
            result = self._class_member(class_id, attr, seen)
            self._member_memo[key] = result
            return result
        return self._class_member(class_id, attr, seen)

    def _class_member(self, class_id: str, attr: str, seen: frozenset[str]) -> Target | None:
        found = self._defs.get(class_id)
        if found is None or class_id in seen:
            return None
        entry, fact = found
        member = entry.defs_by_qual.get(f"{fact.qualname}.{attr}")
        if member is not None:
            return ("def", def_id(entry.path, member.qualname))
        typed = fact.attrs.get(attr) if fact.attrs else None
        if typed is not None:
            found_attr = typed_attr(self, class_id, attr, entry.path, typed)
            if found_attr is not None:
                return found_attr
        for base in self.bases(class_id):
            inherited = self.class_member(base, attr, seen | {class_id})
            if inherited is not None:
                return inherited
        return None
