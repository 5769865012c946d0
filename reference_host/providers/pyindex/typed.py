"""Types the index reads off annotations and assignments: what a function returns, what an
attribute of a class holds. Each answers None rather than guess."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference_host.providers.pyindex.factmodel import Binding

if TYPE_CHECKING:
    from reference_host.providers.pyindex.index import PythonIndex, Target

_MAX_DEPTH = 24


def returned(index: PythonIndex, function_id: str, *, element: bool, depth: int) -> Target | None:
    """An instance of the class a function's return annotation names (or, with *element*, the
    element class of an annotated iterator / iterable / sequence return)."""
    found = index.def_fact(function_id)
    if found is None or found[1].kind != "function" or depth > _MAX_DEPTH:
        return None
    entry, fact = found
    chain = fact.returns_element if element else fact.returns
    if chain is None:
        return None
    target, consumed = index.resolve_chain(entry.path, fact.parent_scope, chain, depth + 1)
    if target and consumed == len(chain) and target[0] == "def" and index.is_class(target[1]):
        return ("instance", target[1])
    return None


def typed_attr(
    index: PythonIndex, class_id: str, attr: str, path: str, typed: tuple[Binding, int]
) -> Target | None:
    """The type of `self.attr` recorded for a class, memoized; None while it is being
    resolved (an attribute typed through itself, `self.a = self.a.copy()`)."""
    key = (class_id, attr)
    if key in index.typed_memo:
        return index.typed_memo[key]
    index.typed_memo[key] = None
    binding, scope = typed
    found = index.binding_target(path, scope, binding, 1)
    index.typed_memo[key] = found
    return found
