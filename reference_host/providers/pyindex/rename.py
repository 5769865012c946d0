"""Rename one definition across the indexed workspace, from the inspect engine's resolved facts.

The symbol is found as inspect finds it (`resolve_symbol`: an id `path::Qual.name`, a dotted
name or a bare name) and must name exactly one class or function. Edited are: the definition's
name; every use whose chain, resolved prefix by prefix through the index, reaches the definition
at that name; every `from m import name` the index resolves to it (an `as` alias keeps the alias,
so the importer's own uses stay as they are); and `__all__` strings of modules exporting it.
Refused, with the reason, are: a new name that is not an identifier or collides in the defining
scope, in the class hierarchy, or in an importer that binds the name unaliased; a method that
overrides or is overridden (renaming one member of a hierarchy would split it); and any
`x.<name>` use of a method where `x` cannot be resolved (it might be this method).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_host.providers.pyindex.facts import UseFact
from reference_host.providers.pyindex.index import FileEntry, PythonIndex, split_id
from reference_host.providers.pyindex.members import bound_in_bodies
from reference_host.providers.pyindex.outside import (
    collection_change,
    hook_name,
    is_dunder,
    outside_base,
)
from reference_host.providers.pyindex.queries import resolve_symbol
from reference_host.providers.pyindex.rebinding import rebound
from reference_host.providers.pyindex.spelling import Spelling
from reference_host.providers.pyindex.tokens import (
    Pos,
    Source,
    Token,
    all_strings,
    chain_positions,
    definition_name,
    import_aliases,
    is_new_name,
)

MAX_REPORTED = 10


@dataclass
class RenameResult:
    """Name occurrences to rewrite per path (start positions, each `length` code points long),
    or why the rename is refused: `ambiguous`/`unresolved` (an incomplete plan) or `invalid`."""

    old: str = ""
    target: str = ""
    sites: dict[str, set[Pos]] = field(default_factory=dict)
    strings: dict[str, list[tuple[Token, str]]] = field(default_factory=dict)  # token, new text
    refusal: str | None = None  # "invalid" | "ambiguous" | "unresolved"
    detail: str = ""
    spelling: Spelling | None = None  # which bindings change with the name (set once resolved)
    new: str = ""
    related: list[str] = field(default_factory=list)  # a method's class, its bases, subclasses

    def refuse(self, kind: str, detail: str) -> RenameResult:
        self.refusal, self.detail = kind, detail
        return self


def _class_of(index: PythonIndex, target: str) -> str | None:
    """The enclosing class id of a method definition, else None."""
    path, qualname = split_id(target)
    owner = qualname.rpartition(".")[0]
    if owner and index.is_class(f"{path}::{owner}"):
        return f"{path}::{owner}"
    return None


def _all_bases(index: PythonIndex, cls: str) -> set[str]:
    seen: set[str] = set()
    stack = list(index.bases(cls))
    while stack:
        base = stack.pop()
        if base not in seen:
            seen.add(base)
            stack.extend(index.bases(base))
    return seen


def _external(file: FileEntry, use: UseFact) -> bool:
    """True when the use's root name is bound by an import the index could not follow (a module
    outside the workspace): such an object is never one of the workspace's classes."""
    scopes = file.facts.scopes
    index, first = use.scope, True
    while index >= 0:
        scope = scopes[index]
        if scope.kind == "class" and not first:
            index = scope.parent
            continue
        binding = scope.bindings.get(use.chain[0])
        if binding is not None:
            return binding[0] == "import"
        first, index = False, scope.parent
    return False


def _shadowed(spelling: Spelling, path: str, scope: int, new: str) -> bool:
    """True when a bare *new* read in *path*'s *scope* would find another binding of *new*
    before the one the rename gives it (a parameter or local of that name)."""
    for _, here in spelling.visible(path, scope):
        if new in here.bindings:
            return True
        if spelling.old in here.bindings:
            return False
    return False


def _captured(
    index: PythonIndex, spelling: Spelling, binds: set[tuple[str, int]], new: str
) -> str | None:
    """`path:line` of a bare *new* read that no scope binds today (a builtin, a star import, an
    undefined name) in a scope where the rename binds *new*: the rename would change what it
    reads. None when there is none."""
    for path, bound in sorted(binds):
        facts = index.files[path].facts
        if not any(chain[0] == new for chain in facts.uses.chains):
            continue
        for use in facts.uses:
            if use.chain[0] != new:
                continue
            for at, here in spelling.visible(path, use.scope):
                if at == bound:
                    return f"{path}:{use.span[0] + 1}"
                if new in here.bindings:
                    break
    return None


def files_to_read(index: PythonIndex, symbol: str) -> tuple[str, list[str]] | None:
    """The name *symbol* defines and the indexed files `plan_rename` needs the text of: the
    definition's, and those whose facts use, import or export that name (a file mentioning it only
    in a comment or a string gets no edit). None when *symbol* names no single definition."""
    matches = [m for m in resolve_symbol(index, {"id": symbol}) if index.def_fact(m) is not None]
    found = index.def_fact(matches[0]) if len(matches) == 1 else None
    if found is None:
        return None
    entry, fact = found
    name, paths = fact.name, [entry.path]
    for path, file in index.files.items():
        facts = file.facts
        if path != entry.path and (
            any(name in chain for chain in facts.uses.chains)
            or any(imp.name == name for imp in facts.imports)
            or (facts.all_names is not None and name in facts.all_names)
        ):
            paths.append(path)
    return name, paths


def unindexed_refusal(name: str, texts: dict[str, str | None]) -> str | None:
    """Why a rename of *name* cannot be proven complete: a file the index holds no facts of (it
    does not parse, is too large, or was not served: text None) may use the name."""
    for path, text in sorted(texts.items()):
        if text is None:
            return f"{path} could not be read; it may use {name}"
        if name in text:
            return f"{path} could not be indexed (it does not parse?); it may use {name}"
    return None


def plan_rename(index: PythonIndex, texts: dict[str, str], symbol: str, new: str) -> RenameResult:
    """Where to rewrite the name of *symbol* to *new* (see the module docstring); *texts* holds at
    least the files `files_to_read` names."""
    result = RenameResult()
    if not is_new_name(new):
        return result.refuse("invalid", f"newName {new[:80]!r} is not a Python identifier")
    matches = [m for m in resolve_symbol(index, {"id": symbol}) if index.def_fact(m) is not None]
    if not matches:
        return result.refuse(
            "unresolved", f"no class or function definition found for {symbol[:200]!r}"
        )
    if len(matches) > 1:
        return result.refuse(
            "ambiguous",
            f"{symbol[:80]!r} names {len(matches)} definitions: "
            + ", ".join(matches[:MAX_REPORTED]),
        )
    target = matches[0]
    found = index.def_fact(target)
    assert found is not None
    entry, fact = found
    result.old, result.target, result.new = fact.name, target, new
    if fact.name == new:
        return result.refuse("invalid", "newName is the current name")
    if new in entry.facts.scopes[fact.parent_scope].bindings:
        return result.refuse(
            "invalid", f"{new} is already bound where {fact.name} is defined ({entry.path})"
        )
    if is_dunder(fact.name) or is_dunder(new):
        kind = "invalid" if is_dunder(new) else "unresolved"
        special = new if is_dunder(new) else fact.name
        return result.refuse(
            kind,
            f"{special} is a name Python itself calls (or IPython, enum: a `_name_`): "
            "renaming changes that",
        )
    if hook_name(fact.name) or hook_name(new):
        special = fact.name if hook_name(fact.name) else new  # the definition's reason first
        return result.refuse(
            "unresolved" if hook_name(fact.name) else "invalid",
            f"{special} is a pytest hook name ({entry.path}:{fact.span[0] + 1}): pytest calls a "
            "plugin's or conftest's pytest_* functions and methods by that name",
        )
    parent_kind = entry.facts.scopes[fact.parent_scope].kind
    changed = collection_change(entry.path, fact.kind, parent_kind, fact.name, new)
    if changed is not None:
        return result.refuse("unresolved", f"{changed} ({entry.path}:{fact.span[0] + 1})")
    cls = _class_of(index, target)
    if cls is not None:
        outside = outside_base(index, [cls, *sorted(_all_bases(index, cls))], fact.name)
        if outside is not None:
            return result.refuse("unresolved", outside)
        if index.class_member(cls, new) is not None:
            return result.refuse("invalid", f"{new} already exists on {cls}")
        result.related = [cls, *sorted(_all_bases(index, cls))]
        for other in [d for ids in index.by_name.values() for d in ids]:
            if other != cls and index.is_class(other) and cls in _all_bases(index, other):
                result.related.append(other)
                member = index.class_member(other, fact.name)
                if member is not None and member[1] != target:
                    return result.refuse(
                        "unresolved",
                        f"{target} is overridden in {other}; rename the hierarchy by hand",
                    )
        for base in _all_bases(index, cls):
            if index.class_member(base, fact.name) is not None:
                return result.refuse("unresolved", f"{target} overrides a member of {base}")
        holder = bound_in_bodies(index, result.related, new)
        if holder is not None:
            return result.refuse(
                "invalid", f"{new} is already an attribute of {holder}, related to {cls}"
            )
    sources = {
        path: Source(text)
        for path, text in texts.items()
        if path in index.files and fact.name in text
    }
    head = sources[entry.path].head(fact.span) if entry.path in sources else None
    definition = definition_name(head or [], fact.span, fact.name)
    if definition is None:
        return result.refuse("unresolved", f"cannot place the name of {target} in its source")
    overloads: list[Pos] = []
    again = rebound(texts[entry.path], definition[0], fact.name, overloads)
    if again is not None:
        return result.refuse(
            "unresolved",
            f"renaming the definition of {fact.name} in {entry.path} would not rename every way "
            f"it is reached: {again}; rename by hand",
        )
    result.sites.setdefault(entry.path, set()).add(definition)
    for row, col in overloads:  # the other members of its `@overload` set
        head = sources[entry.path].head((row, col, row, col))
        twin = definition_name(head or [], (row, col, row + 1, 0), fact.name)
        if twin is None:
            return result.refuse("unresolved", f"cannot place the overload on line {row + 1}")
        result.sites[entry.path].add(twin)
    spelling = result.spelling = Spelling(index, fact.name, target)
    for path, source in sources.items():
        if not spelling.note_aliases(path, source):
            return result.refuse("unresolved", f"cannot read the imports of {fact.name} in {path}")
    unresolved: list[str] = []
    mirrored: list[str] = []  # `outside_module.<name>` reads: a class mirroring it by name
    binds_new: set[tuple[str, int]] = set()  # (path, scope) where the new name will be bound
    if entry.facts.scopes[fact.parent_scope].kind != "class":
        binds_new.add((entry.path, fact.parent_scope))
    for path, source in sources.items():
        file = index.files[path]
        for use in file.facts.uses:
            if fact.name not in use.chain:
                continue
            positions = None
            for k, part in enumerate(use.chain):
                if part != fact.name:
                    continue
                reached, consumed = index.resolve_chain(path, use.scope, use.chain[: k + 1])
                if reached == ("def", target) and consumed == k + 1:
                    if not spelling.use_follows(path, use.scope, use.chain[:k]):
                        continue  # read through a binding that keeps the old name
                    if positions is None:
                        toks = source.within(use.span)
                        positions = chain_positions(toks or [], use.span, use.chain)
                    if positions[k] is None:
                        return result.refuse(
                            "unresolved",
                            f"cannot place a use of {fact.name} in {path}:{use.span[0] + 1}",
                        )
                    if k == 0 and _shadowed(spelling, path, use.scope, new):
                        return result.refuse(
                            "invalid",
                            f"{new} is bound in {path} where line {use.span[0] + 1} reads "
                            f"{fact.name}: the renamed use would read that {new}",
                        )
                    result.sites.setdefault(path, set()).add(positions[k])  # type: ignore[arg-type]
                elif cls is not None and k > 0 and consumed < k and not _external(file, use):
                    unresolved.append(f"{path}:{use.span[0] + 1}")
                elif (
                    fact.kind == "class"
                    and cls is None
                    and k > 0 == consumed
                    and _external(file, use)
                ):
                    mirrored.append(f"{path}:{use.span[0] + 1}")
        for imp in file.facts.imports:
            if imp.name != fact.name:
                continue
            absname = index.absolute_module(path, imp.module, imp.level)
            holder = index.resolve_module(absname, path) if absname else None
            if holder is None or index.module_attr(holder, fact.name) != ("def", target):
                continue
            if not spelling.exports_new(holder):
                continue  # the module keeps exporting the old name (`old as old`)
            toks = source.within(imp.span)
            if toks is None:
                return result.refuse(
                    "unresolved",
                    f"cannot read an import of {fact.name} in {path}:{imp.span[0] + 1}",
                )
            aliases, _ = import_aliases(toks, imp.span)
            for alias in aliases:
                if alias.name != fact.name:
                    continue
                if alias.bound == fact.name and new in file.facts.scopes[imp.scope].bindings:
                    return result.refuse(
                        "invalid", f"{new} is already bound in {path}, which imports {fact.name}"
                    )
                result.sites.setdefault(path, set()).add(alias.name_start)
                if alias.bound == fact.name and not alias.explicit:
                    binds_new.add((path, imp.scope))
        exported = file.facts.all_names and fact.name in file.facts.all_names
        if (
            exported
            and index.module_attr(path, fact.name) == ("def", target)
            and spelling.exports_new(path)
        ):
            statements = source.all_statements()
            if statements is None:
                return result.refuse("unresolved", f"cannot read the __all__ of {path}")
            result.strings[path] = all_strings(statements, fact.name, new)
    captured = _captured(index, spelling, binds_new, new)
    if captured is not None:
        return result.refuse(
            "invalid",
            f"{captured} reads a {new} the renamed name would hide (a builtin or a star import)",
        )
    if mirrored:
        return result.refuse(
            "unresolved",
            f"{fact.name} is also read from a module outside the workspace, at "
            + ", ".join(sorted(set(mirrored))[:MAX_REPORTED])
            + ": code or tests may pair the two by name (httpx maps httpcore's exceptions to "
            "its own of the same names, and a test compares their __name__s)",
        )
    if unresolved:
        unique = sorted(set(unresolved))
        return result.refuse(
            "unresolved",
            f"{len(unique)} use(s) of .{fact.name} on an object the index cannot resolve (it may be "
            f"{target}): " + ", ".join(unique[:MAX_REPORTED]),
        )
    return result
