"""The resolved tables of an index: every use and import of every file linked to its target.

This is the expensive half of building an index (each use is resolved through scopes, imports and
classes), and it depends only on the tree — the (path, blob id) pairs — so a whole `Links` can be
kept in the persistent cache (see indexcache.py) and adopted by a new index of the same tree instead
of being computed again. Queries only read these tables; resolution they need beyond them (a
position, a symbol name) is done lazily by the index and memoized there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from sys import intern
from typing import TYPE_CHECKING, NamedTuple

from reference_host.providers.pyindex.chains import CALL
from reference_host.providers.pyindex.factmodel import KIND_CODES, Span, shared_numbers
from reference_host.providers.pyindex.unresolved import MAX_EXAMPLES, note_unresolved

if TYPE_CHECKING:
    from reference_host.providers.pyindex.index import FileEntry, PythonIndex, Target


CALL_USE, BASE_USE = KIND_CODES["call"], KIND_CODES["base"]


def def_id(path: str, qualname: str) -> str:
    return f"{path}::{qualname}"


def split_id(node_id: str) -> tuple[str, str]:
    path, _, qualname = node_id.partition("::")
    return path, qualname


class Ref(NamedTuple):
    """One use of `target` inside `source` (the enclosing definition's id, or the module path);
    a flat tuple, so that a cached index's hundred thousand of them are made quickly
    (indexcache.py) and hold their position without a span tuple each (48 bytes less a ref)."""

    source: str
    target: str
    kind: str  # edge kind: calls | imports | inherits | depends-on
    path: str
    line: int
    char: int
    end_line: int
    end_char: int

    @property
    def span(self) -> Span:
        return (self.line, self.char, self.end_line, self.end_char)


def new_ref(source: str, target: str, kind: str, path: str, span: Span) -> Ref:
    return Ref(source, target, kind, path, *span)


def _sets() -> defaultdict[str, set[str]]:
    return defaultdict(set)


@dataclass(slots=True)
class Links:
    """References by target and by source, module dependencies, and the uses left unresolved."""

    refs: list[Ref] = field(default_factory=list)  # every reference, in the order found
    refs_to: defaultdict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    refs_from: defaultdict[str, list[Ref]] = field(default_factory=lambda: defaultdict(list))
    deps: defaultdict[str, set[str]] = field(default_factory=_sets)
    # reverse imports executed at run time, and the importers of a module as a whole module
    # (`import pkg`, `from . import sub`); TYPE_CHECKING-only importers are kept apart
    rdeps: defaultdict[str, set[str]] = field(default_factory=_sets)
    module_rdeps: defaultdict[str, set[str]] = field(default_factory=_sets)
    type_rdeps: defaultdict[str, set[str]] = field(default_factory=_sets)
    # attribute names used on something the index could not resolve (`x.request()` with `x`
    # of unknown type): per name, how many such uses and calls, and where the first few are
    unresolved: dict[str, list[int]] = field(default_factory=dict)
    unresolved_at: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def add_ref(self, ref: Ref) -> None:
        self.refs.append(ref)
        self.refs_to[ref.target].append(ref)
        self.refs_from[ref.source].append(ref)

    def absorb(self, later: Links) -> None:
        """Append the tables of files linked after every file of these (forklink.py): the same
        tables as linking all of them in turn into one."""
        for ref in later.refs:
            self.add_ref(ref)
        for name in ("deps", "rdeps", "module_rdeps", "type_rdeps"):
            mine: defaultdict[str, set[str]] = getattr(self, name)
            for holder, members in getattr(later, name).items():
                mine[holder] |= members
        for attr, (uses, calls) in later.unresolved.items():
            counts = self.unresolved.setdefault(attr, [0, 0])
            counts[0] += uses
            counts[1] += calls
        for attr, samples in later.unresolved_at.items():
            kept = self.unresolved_at.setdefault(attr, [])
            kept.extend(samples[: max(0, MAX_EXAMPLES - len(kept))])

    def add_dep(
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


def owner_id(index: PythonIndex, path: str, scope: int) -> str:
    owner = index.files[path].facts.scopes[scope].owner
    return def_id(path, owner) if owner else path


def _owners(index: PythonIndex, path: str) -> Callable[[int], str]:
    """`owner_id` of one file's scopes, each id made once: the references of a large tree then
    share their source and target strings (about 15 MiB less on Django)."""
    made: dict[int, str] = {}

    def owner(scope: int) -> str:
        found = made.get(scope)
        if found is None:
            found = made[scope] = intern(owner_id(index, path, scope))
        return found

    return owner


def link_file(
    index: PythonIndex,
    entry: FileEntry,
    reuse: bool = True,
    imports: list[Ref] | None = None,
) -> None:
    """Resolve every use of one file into `index.links`, then record its imports: *imports*,
    the references `link_imports` returned for it, or resolved now. Without *reuse*, every use
    is resolved again even where its chain was resolved in the same scope before (the tests
    compare both)."""
    links, path = index.links, entry.path
    owner = _owners(index, path)
    uses = entry.facts.uses
    # the columns read directly (no UseFact made for each use); span numbers as shared ints,
    # since the references keep them (factmodel.shared_numbers)
    chains, spans = uses.chains, list(shared_numbers(uses.spans))
    columns = zip(uses.scopes, uses.kinds, uses.chain_of, strict=True)
    through: list[str] = []
    # what a chain resolved to in a scope, for the uses that repeat it (42% of Salt's): the
    # resolution reads only the tree and the index's memos, whose answer to a question asked
    # again is the answer they gave, so it is the same each time
    resolved: dict[tuple[int, int], tuple[Target | None, int, tuple[str, ...]]] = {}
    for at, (scope, kind, number) in enumerate(columns):
        chain = chains[number]
        known = resolved.get((scope, number))
        if known is None:
            target, consumed = index.resolve_chain(path, scope, chain, 0, through)
            if reuse:
                resolved[scope, number] = (target, consumed, tuple(through))
        else:
            target, consumed, passed = known
            through.extend(passed)
        size = len(chain)
        if consumed < size and size > 1:  # one bare name: no attribute left unresolved
            note_unresolved(index, path, scope, chain, kind == CALL_USE, spans[4 * at], consumed)
        if target is None:
            continue
        complete = consumed == size
        if not complete and chain[consumed] == CALL:
            through.clear()
            continue  # `f().x`: the call of f is recorded as its own use
        span = (spans[4 * at], spans[4 * at + 1], spans[4 * at + 2], spans[4 * at + 3])
        if through:  # `C.member`: a use of the class C as well
            for holder in through:
                links.add_ref(new_ref(owner(scope), intern(holder), "depends-on", path, span))
            through.clear()
        if target[0] in ("instance", "super"):
            continue
        if kind == CALL_USE and complete and target[0] == "def":
            edge = "calls"
        elif kind == BASE_USE and complete:
            edge = "inherits"
        else:
            edge = "depends-on"
        links.add_ref(new_ref(owner(scope), intern(target[1]), edge, path, span))
    for ref in link_imports(index, entry) if imports is None else imports:
        links.add_ref(ref)


def link_imports(index: PythonIndex, entry: FileEntry) -> list[Ref]:
    """Resolve the imports of one file: the module dependencies go into `index.links` now (the
    import graph `impact` reads), the references are returned, for `link_file` to record after
    the file's uses, where they have always been."""
    links, path = index.links, entry.path
    owner = _owners(index, path)
    refs: list[Ref] = []
    for imp in entry.facts.imports:
        absname = index.absolute_module(path, imp.module, imp.level)
        if absname is None:
            continue
        source = owner(imp.scope)
        # the named module only: that importing `a.b.c` also runs `a/__init__` and
        # `a/b/__init__` does not make this module depend on everything they import
        last = index.resolve_module(absname, path) if absname else None
        if imp.name is None:
            links.add_dep(path, last, imp.type_only, whole=True)
            if last is not None:
                refs.append(new_ref(source, last, "imports", path, imp.span))
            continue
        if imp.name == "*":
            continue
        target = index.import_target(path, ("import", imp.module, imp.name, imp.level), 0)
        if target is None or target[0] == "instance":
            continue
        if target[0] == "module":
            links.add_dep(path, target[1], imp.type_only, whole=True)
        else:
            links.add_dep(path, split_id(target[1])[0], imp.type_only)
        refs.append(new_ref(source, intern(target[1]), "imports", path, imp.span))
    return refs
