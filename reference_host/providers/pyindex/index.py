"""A whole-workspace Python index: module table, name resolution across imports, reference edges.

Built from per-blob facts in one pass; every use is resolved eagerly so that queries on a cached
index only walk dictionaries. Resolution is static and best-effort: imports (absolute, relative,
aliased, re-exported, star), `self`/`cls` attributes, base classes, and variables assigned once from
a class call or annotated with a class. Anything else is left unresolved rather than guessed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from reference_host.providers.pyindex.chains import CALL
from reference_host.providers.pyindex.facts import (
    Binding,
    DefFact,
    ModuleFacts,
    Span,
)
from reference_host.providers.pyindex.modules import ModuleName, is_test_path, module_names
from reference_host.providers.pyindex.typed import returned, typed_attr
from reference_host.providers.pyindex.unresolved import note_unresolved

Target = tuple[str, str]  # ("module", path) | ("def", id) | ("instance" | "super", class id)
_MAX_DEPTH = 24


def def_id(path: str, qualname: str) -> str:
    return f"{path}::{qualname}"


def split_id(node_id: str) -> tuple[str, str]:
    path, _, qualname = node_id.partition("::")
    return path, qualname


@dataclass(slots=True)
class FileEntry:
    path: str
    blob: str
    facts: ModuleFacts
    name: ModuleName | None
    is_test: bool
    has_star: bool = False
    defs_by_qual: dict[str, DefFact] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class Ref:
    """One use of `target` inside `source` (the enclosing definition's id, or the module path)."""

    source: str
    target: str
    kind: str  # edge kind: calls | imports | inherits | depends-on
    path: str
    span: Span


class PythonIndex:
    """Resolved facts of one tree (a set of (path, blob) pairs)."""

    def __init__(
        self,
        files: dict[str, tuple[str, ModuleFacts]],
        names: dict[str, ModuleName] | None = None,
    ) -> None:
        """*names*: the module names of a larger tree these files belong to (one file's index)."""
        names = module_names(files) if names is None else names
        self.files: dict[str, FileEntry] = {}
        self.modules: dict[str, list[tuple[str, bool]]] = defaultdict(list)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self._defs: dict[str, tuple[FileEntry, DefFact]] = {}
        for path in sorted(files):
            blob, facts = files[path]
            entry = FileEntry(path, blob, facts, names.get(path), is_test_path(path))
            entry.defs_by_qual = {d.qualname: d for d in facts.defs}
            entry.has_star = any(i.name == "*" and i.scope == 0 for i in facts.imports)
            self.files[path] = entry
            if entry.name is not None:
                self.modules[entry.name.primary].append((path, True))
                for alias in entry.name.aliases:
                    self.modules[alias].append((path, False))
            for d in facts.defs:
                ident = def_id(path, d.qualname)
                self.by_name[d.name].append(ident)
                self._defs.setdefault(ident, (entry, entry.defs_by_qual[d.qualname]))
        self._member_memo: dict[tuple[str, str], Target | None] = {}
        self._attr_memo: dict[tuple[str, str], Target | None] = {}
        self._bases_memo: dict[str, list[str]] = {}
        self.typed_memo: dict[tuple[str, str], Target | None] = {}
        self.refs_to: dict[str, list[Ref]] = defaultdict(list)
        self.refs_from: dict[str, list[Ref]] = defaultdict(list)
        self.deps: dict[str, set[str]] = defaultdict(set)
        # reverse imports executed at run time, and the importers of a module as a whole module
        # (`import pkg`, `from . import sub`); TYPE_CHECKING-only importers are kept apart
        self.rdeps: dict[str, set[str]] = defaultdict(set)
        self.module_rdeps: dict[str, set[str]] = defaultdict(set)
        self.type_rdeps: dict[str, set[str]] = defaultdict(set)
        # attribute names used on something the index could not resolve (`x.request()` with `x`
        # of unknown type): per name, how many such uses and calls, and where the first few are
        self.unresolved: dict[str, list[int]] = {}
        self.unresolved_at: dict[str, list[tuple[str, int]]] = {}
        for entry in self.files.values():
            self._index_file(entry)

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
            return self._import_target(path, binding, depth)
        if kind in ("instance", "element") and depth < _MAX_DEPTH:
            chain = binding[1]
            assert isinstance(chain, tuple)
            target, consumed = self.resolve_chain(path, scope, chain, depth + 1)
            if not target or consumed != len(chain) or target[0] != "def":
                return None
            if kind == "instance" and self.is_class(target[1]):
                return ("instance", target[1])
            return returned(self, target[1], element=kind == "element", depth=depth + 1)
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
        self, path: str, scope: int, chain: tuple[str, ...], depth: int = 0
    ) -> tuple[Target | None, int]:
        """Resolve `a.b.c` as far as static knowledge goes: (deepest target, names consumed)."""
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
        typed = fact.attrs.get(attr)
        if typed is not None:
            found_attr = typed_attr(self, class_id, attr, entry.path, typed)
            if found_attr is not None:
                return found_attr
        for base in self.bases(class_id):
            inherited = self.class_member(base, attr, seen | {class_id})
            if inherited is not None:
                return inherited
        return None

    # -- indexing ---------------------------------------------------------------------------
    def owner_id(self, path: str, scope: int) -> str:
        owner = self.files[path].facts.scopes[scope].owner
        return def_id(path, owner) if owner else path

    def _add_ref(self, ref: Ref) -> None:
        self.refs_to[ref.target].append(ref)
        self.refs_from[ref.source].append(ref)

    def _add_dep(
        self, importer: str, imported: str | None, type_only: bool, whole: bool = False
    ) -> None:
        if imported is None or imported == importer:
            return
        if type_only:
            self.type_rdeps[imported].add(importer)
            return
        self.deps[importer].add(imported)
        self.rdeps[imported].add(importer)
        if whole:
            self.module_rdeps[imported].add(importer)

    def _index_file(self, entry: FileEntry) -> None:
        path = entry.path
        for use in entry.facts.uses:
            target, consumed = self.resolve_chain(path, use.scope, use.chain)
            if consumed < len(use.chain):
                note_unresolved(self, path, use, consumed)
            if target is None or target[0] in ("instance", "super"):
                continue
            complete = consumed == len(use.chain)
            if not complete and use.chain[consumed] == CALL:
                continue  # `f().x`: the call of f is recorded as its own use
            if use.kind == "call" and complete and target[0] == "def":
                kind = "calls"
            elif use.kind == "base" and complete:
                kind = "inherits"
            else:
                kind = "depends-on"
            self._add_ref(Ref(self.owner_id(path, use.scope), target[1], kind, path, use.span))
        for imp in entry.facts.imports:
            absname = self.absolute_module(path, imp.module, imp.level)
            if absname is None:
                continue
            source = self.owner_id(path, imp.scope)
            # the named module only: that importing `a.b.c` also runs `a/__init__` and
            # `a/b/__init__` does not make this module depend on everything they import
            last = self.resolve_module(absname, path) if absname else None
            if imp.name is None:
                self._add_dep(path, last, imp.type_only, whole=True)
                if last is not None:
                    self._add_ref(Ref(source, last, "imports", path, imp.span))
                continue
            if imp.name == "*":
                continue
            target = self._import_target(path, ("import", imp.module, imp.name, imp.level), 0)
            if target is None or target[0] == "instance":
                continue
            if target[0] == "module":
                self._add_dep(path, target[1], imp.type_only, whole=True)
            else:
                self._add_dep(path, split_id(target[1])[0], imp.type_only)
            self._add_ref(Ref(source, target[1], "imports", path, imp.span))
