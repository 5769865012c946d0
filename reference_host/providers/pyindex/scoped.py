"""An index over part of a tree that answers exactly as the whole tree's index would, or says it can't.

Why a part can be enough: a use resolves to a definition only through identifiers written where the
use is (index.py): a definition binds its own name, an import binds the name it imports or its `as`
name, a submodule is its last dotted name, an attribute lookup (a module's, a class's and its
bases', an instance's, `super()`'s) finds a member of that very name, and every typed value
(`v = C()`, `with C() as v`, returns) is an instance, never a definition. So the references to `N`
lie in the files that spell `N` or one of its `as` names (words.py); those files' uses that spell
them are all that needs linking, and resolving them reads only the files the lookups reach.

`ScopedIndex` holds the module table of the whole tree (from its paths) but the facts of only some
files, and refuses — raises `Missing` — whenever anything it does not hold would be read: a file's
facts, a definition in such a file, the references, definitions or unresolved uses of a name whose
files it did not link, or any enumeration of the whole tree. The caller adds what was missing and
tries again (early.py). Resolution memoizes with cycle guards and a depth bound, so a value met
through a cycle or cut at the bound could depend on the order the whole build resolves in; a
scoped index that met either is marked impure (`purity`) and its answer is not used.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from itertools import compress
from typing import Any, NoReturn, TypeVar

from reference_host.providers.pyindex.chains import CALL
from reference_host.providers.pyindex.facts import Binding, ModuleFacts, Uses
from reference_host.providers.pyindex.index import _MAX_DEPTH, FileEntry, PythonIndex, Target
from reference_host.providers.pyindex.linking import Links, Ref, link_file, split_id
from reference_host.providers.pyindex.modules import ModuleName

T = TypeVar("T")


class Missing(Exception):
    """What the scoped index would have had to read: files, names, or the whole tree."""

    def __init__(
        self,
        paths: AbstractSet[str] = frozenset(),
        names: AbstractSet[str] = frozenset(),
        everything: bool = False,
    ) -> None:
        super().__init__(sorted(paths), sorted(names), everything)
        self.paths, self.names, self.everything = set(paths), set(names), everything


def _everything() -> NoReturn:
    raise Missing(everything=True)


def _whole_listing(self: Any) -> Any:
    """A table's keys, values or items: its whole listing, which a part of the tree cannot give."""
    _everything()


class _Files(dict[str, FileEntry]):
    """Held files; any other path of the tree is Missing; membership and listing are the whole
    tree's (its paths, in order)."""

    def __init__(self, held: dict[str, FileEntry], tree: AbstractSet[str]) -> None:
        super().__init__(held)
        self.tree = tree

    def __missing__(self, path: str) -> FileEntry:
        if path in self.tree:
            raise Missing(paths={path})
        raise KeyError(path)

    def get(self, path: str, default: Any = None) -> Any:
        if dict.__contains__(self, path):
            return dict.__getitem__(self, path)
        if path in self.tree:
            raise Missing(paths={path})
        return default

    def __contains__(self, path: object) -> bool:
        return path in self.tree

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.tree))

    def __len__(self) -> int:
        return len(self.tree)

    keys = values = items = _whole_listing


class _Defs(dict[str, tuple[FileEntry, Any]]):
    """Definitions by id; one of a tree file this index does not hold is Missing."""

    def __init__(self, held: dict[str, tuple[FileEntry, Any]], files: _Files) -> None:
        super().__init__(held)
        self.files = files

    def get(self, node_id: str, default: Any = None) -> Any:
        if dict.__contains__(self, node_id):
            return dict.__getitem__(self, node_id)
        path = split_id(node_id)[0]
        if path in self.files.tree and not dict.__contains__(self.files, path):
            raise Missing(paths={path})
        return default


class _ByName(defaultdict[str, Any]):
    """A table by name (or by a node whose name `name_of` gives) that is complete only for the
    names this index covers; asking for another one is Missing."""

    def __init__(
        self, table: dict[str, Any], covered: AbstractSet[str], name_of: Callable[[str], str]
    ) -> None:
        super().__init__(list, table)
        self.covered, self.name_of = covered, name_of

    def get(self, key: str, default: Any = None) -> Any:
        name = self.name_of(key)
        if name not in self.covered:
            raise Missing(names={name})
        return dict.get(self, key, default)

    def __iter__(self) -> Iterator[str]:
        _everything()

    keys = values = items = _whole_listing


class Purity:
    """Whether a scoped index met a cycle guard or the depth bound; its own object so that the
    memos need no reference back to the index (a cycle: builds run with the collector paused,
    and what it would have freed is then frozen for good)."""

    __slots__ = ("impure",)

    def __init__(self) -> None:
        self.impure = False


class _Memo(dict[Any, Any]):
    """A resolution memo that notices a lookup of a key still being resolved (a cycle guard)."""

    def __init__(self, seen: Purity) -> None:
        super().__init__()
        self.seen = seen
        self.open: set[Any] = set()

    def __setitem__(self, key: Any, value: Any) -> None:
        if dict.__contains__(self, key):
            self.open.discard(key)
        else:
            self.open.add(key)
        dict.__setitem__(self, key, value)

    def __contains__(self, key: object) -> bool:
        found = dict.__contains__(self, key)
        if found and key in self.open:
            self.seen.impure = True
        return found

    def clear(self) -> None:
        self.open.clear()
        dict.clear(self)


def node_name(names: dict[str, ModuleName], node_id: str) -> str:
    """The identifier through which uses reach a node: a definition's own name, a module's
    last dotted name (a path outside the module table: the whole tree would be needed)."""
    path, qualname = split_id(node_id)
    if qualname:
        return qualname.rpartition(".")[2]
    name = names.get(path)
    if name is None:
        _everything()
    return name.primary.rpartition(".")[2]


def binding_names(facts: ModuleFacts) -> Iterator[tuple[str, str]]:
    """(name written, name it binds) of every import and alias binding of a file:
    `from m import a as b` -> (a, b), `import p.q as r` -> (q, r), `import p.q` -> (p, p),
    `run = core.compute` -> (compute, run): a use of the bound name may be one of the written."""
    for scope in facts.scopes:
        for bound, binding in scope.bindings.items():
            if binding[0] == "alias":
                chain = binding[1]
                assert isinstance(chain, tuple)
                yield str(chain[-1]), bound
                continue
            if binding[0] != "import":
                continue
            written = binding[2] if binding[2] is not None else str(binding[1]).rpartition(".")[2]
            yield str(written), bound


def spelled_by(facts: ModuleFacts, words: AbstractSet[str]) -> ModuleFacts:
    """*facts* with only the uses whose chain has one of *words* and the imports that name one:
    the only ones that can resolve to a definition of that name, in their original order."""
    uses = facts.uses
    mask = bytes(not words.isdisjoint(chain) for chain in uses.chains)
    kept = list(compress(range(len(uses.chain_of)), map(mask.__getitem__, uses.chain_of)))
    columns = Uses.from_lists(
        [uses.scopes[at] for at in kept],
        [uses.kinds[at] for at in kept],
        [uses.spans[4 * at + k] for at in kept for k in range(4)],
        [uses.chain_of[at] for at in kept],
        uses.chains,
    )
    imports = [
        imp
        for imp in facts.imports
        if (imp.name if imp.name is not None else imp.module.rpartition(".")[2]) in words
    ]
    return ModuleFacts(facts.blob, facts.scopes, facts.defs, columns, imports, facts.all_names)


class ScopedIndex(PythonIndex):
    """The index of *held* files of a tree whose Python paths are *tree* (module names *names*),
    complete for the references, definitions and unresolved uses of the names in *covered*
    once `link` has linked every held file that spells one of them."""

    def __init__(
        self,
        held: dict[str, tuple[str, ModuleFacts]],
        names: dict[str, ModuleName],
        tree: AbstractSet[str],
        covered: AbstractSet[str],
    ) -> None:
        super().__init__(held, names, links=Links())
        self.purity = Purity()
        self.covered = frozenset(covered)
        self._names = names
        # the module table of the whole tree, in the order the whole index makes it
        self.modules = defaultdict(list)
        for path in sorted(tree):
            name = names.get(path)
            if name is not None:
                self.modules[name.primary].append((path, True))
                for alias in name.aliases:
                    self.modules[alias].append((path, False))
        self.files = _Files(self.files, tree)
        self._defs = _Defs(self._defs, self.files)
        self._member_memo = _Memo(self.purity)
        self._attr_memo = _Memo(self.purity)
        self._bases_memo = _Memo(self.purity)
        self.typed_memo = _Memo(self.purity)

    def link(
        self,
        paths: list[str],
        fetch: Callable[[set[str]], dict[str, tuple[str, ModuleFacts]]],
        spelled: dict[str, ModuleFacts] | None = None,
    ) -> None:
        """Resolve the uses and imports spelling a covered name in *paths* (sorted, held) as the
        whole build would; first use by use, holding whatever files they reach (their facts from
        *fetch*, which raises `Missing` when it cannot give them). *spelled* keeps `spelled_by`
        per blob for these covered names across tries."""
        spelled = {} if spelled is None else spelled
        entries = []
        for path in paths:
            entry = dict.__getitem__(self.files, path)
            kept = spelled.get(entry.blob)
            if kept is None:
                kept = spelled[entry.blob] = spelled_by(entry.facts, self.covered)
            entries.append(FileEntry(path, entry.blob, kept, entry.name, False))
        for entry in entries:
            for use in entry.facts.uses:
                self.settle(fetch, self.resolve_chain, entry.path, use.scope, use.chain)
            for imp in entry.facts.imports:
                if imp.name is not None and imp.name != "*":
                    binding = ("import", imp.module, imp.name, imp.level)
                    self.settle(fetch, self.import_target, entry.path, binding, 0)
        for entry in entries:
            link_file(self, entry)
        name_of = functools.partial(node_name, self._names)  # not a bound method: no cycle
        self.refs_to = _ByName(self.links.refs_to, self.covered, name_of)
        self.refs_from = _ByName(self.links.refs_from, frozenset(), name_of)
        self.by_name = _ByName(self.by_name, self.covered, str)
        self.unresolved = _ByName(self.unresolved, self.covered, str)
        self.unresolved_at = _ByName(self.unresolved_at, self.covered, str)

    def settle(
        self,
        fetch: Callable[[set[str]], dict[str, tuple[str, ModuleFacts]]],
        resolve: Callable[..., T],
        *args: Any,
    ) -> T:
        """`resolve(*args)`, holding the files it reaches first; names it would need are
        raised (`Missing`): they need another try with more names covered."""
        while True:
            try:
                return resolve(*args)
            except Missing as exc:
                self.forget_resolutions()
                if exc.everything or exc.names or not exc.paths:
                    raise
                for path, (blob, facts) in fetch(exc.paths).items():
                    self.hold(path, blob, facts, self._names.get(path))

    def held(self) -> set[str]:
        return set(dict.keys(self.files))

    # -- what could depend on the order of resolution ----------------------------------------
    def module_attr(self, path: str, attr: str, depth: int = 0) -> Target | None:
        if depth > _MAX_DEPTH and not dict.__contains__(self._attr_memo, (path, attr)):
            self.purity.impure = True
        return super().module_attr(path, attr, depth)

    def binding_target(self, path: str, scope: int, binding: Binding, depth: int) -> Target | None:
        if binding[0] in ("instance", "element", "alias") and depth >= _MAX_DEPTH:
            self.purity.impure = True
        return super().binding_target(path, scope, binding, depth)

    def attr_of(self, target: Target, attr: str, depth: int = 0) -> Target | None:
        if attr == CALL and depth + 1 > _MAX_DEPTH:
            self.purity.impure = True
        return super().attr_of(target, attr, depth)

    def _class_member(self, class_id: str, attr: str, seen: frozenset[str]) -> Target | None:
        if class_id in seen:
            self.purity.impure = True
        return super()._class_member(class_id, attr, seen)


__all__ = ["Missing", "Ref", "ScopedIndex", "binding_names", "spelled_by"]
