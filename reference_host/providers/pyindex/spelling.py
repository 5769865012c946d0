"""Which spellings of a renamed definition's name change with it, and which stay.

Renaming `f` to `g` rewrites the definition and the `from m import f` statements that reach it,
but an import spelled `from m import f as f` keeps binding `f` (only its first `f` is renamed): a
typed package's `__init__.py` re-exports that way (`from .utils import echo as echo`). So a use
of the name must be renamed exactly when the binding it is read through will be spelled `g`
after the edit: the definition itself, or an unaliased import whose module will export `g` in
turn. A use read through a binding that stays `f` still works and is left as it is; renaming it
would name something that no longer exists (`click.echo` rewritten to `click.say` while
`click/__init__.py` still exports only `echo`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from reference_host.providers.pyindex.facts import Binding, Scope
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.linking import def_id
from reference_host.providers.pyindex.tokens import Source, import_aliases


@dataclass
class Spelling:
    """The renamed name *old* of definition *target*, and where its bindings keep that name."""

    index: PythonIndex
    old: str
    target: str
    kept: set[tuple[str, int]] = field(default_factory=set)  # (path, scope) of `old as old`
    _exports: dict[str, bool] = field(default_factory=dict)

    def note_aliases(self, path: str, source: Source) -> bool:
        """Record the `old as old` imports of *path* (the name they bind stays *old*); False
        when one of its imports of *old* cannot be read."""
        for imp in self.index.files[path].facts.imports:
            if imp.name != self.old:
                continue
            tokens = source.within(imp.span)
            if tokens is None:
                return False
            aliases, _ = import_aliases(tokens, imp.span)
            if any(a.name == self.old and a.explicit and a.bound == self.old for a in aliases):
                self.kept.add((path, imp.scope))
        return True

    def exports_new(self, path: str) -> bool:
        """True when module *path*'s attribute *old* is spelled with the new name after the edit."""
        if path not in self._exports:
            self._exports[path] = False  # a cycle of imports never exports it
            self._exports[path] = self._module_follows(path)
        return self._exports[path]

    def _module_follows(self, path: str) -> bool:
        facts = self.index.files[path].facts
        binding = facts.scopes[0].bindings.get(self.old)
        if binding is not None:
            return self.binding_follows(path, 0, binding)
        for imp in facts.imports:  # a star import re-exports what its module exports
            if imp.name == "*" and imp.scope == 0:
                source = self._holder(path, imp.module, imp.level)
                if source is not None and self.index.module_attr(source, self.old) == (
                    "def",
                    self.target,
                ):
                    return self.exports_new(source)
        return False

    def binding_follows(self, path: str, scope: int, binding: Binding) -> bool:
        """True when *binding* (of *old*, in *path*'s scope *scope*) is renamed with the target."""
        if binding[0] == "def":
            return def_id(path, str(binding[1])) == self.target
        if binding[0] != "import" or binding[2] != self.old or (path, scope) in self.kept:
            return False
        source = self._holder(path, str(binding[1]), int(binding[3]))  # type: ignore[call-overload]
        return source is not None and self.exports_new(source)

    def name_follows(self, path: str, scope: int) -> bool:
        """True when the bare name *old* read in *path*'s scope *scope* is renamed (Python's
        lookup: enclosing function scopes, not class bodies, then the module's star imports)."""
        for at, here in self.visible(path, scope):
            binding = here.bindings.get(self.old)
            if binding is not None:
                return self.binding_follows(path, at, binding)
        return self.exports_new(path)

    def visible(self, path: str, scope: int) -> Iterator[tuple[int, Scope]]:
        """The scopes a bare name read in *path*'s scope *scope* is looked up in, innermost
        first (a class body only when the name is read in it directly)."""
        scopes = self.index.files[path].facts.scopes
        at, first = scope, True
        while at >= 0:
            here = scopes[at]
            if here.kind != "class" or first:
                yield at, here
            first, at = False, here.parent

    def use_follows(self, path: str, scope: int, prefix: tuple[str, ...]) -> bool:
        """True when the name read after *prefix* (empty: a bare name) changes with the rename."""
        if not prefix:
            return self.name_follows(path, scope)
        holder, consumed = self.index.resolve_chain(path, scope, prefix)
        if holder is not None and consumed == len(prefix) and holder[0] == "module":
            return self.exports_new(holder[1])
        return True  # an attribute of a class or an instance: the definition itself

    def _holder(self, path: str, module: str, level: int) -> str | None:
        absname = self.index.absolute_module(path, module, level)
        return self.index.resolve_module(absname, path) if absname else None
