"""Uses the index could not resolve, counted by attribute name, so an answer can say what it dropped.

`x.request()` where nothing says what `x` is may be a call of any method named `request`; the
index does not guess, but `references` / `callers` of such a method report how many such uses
exist (and where the first few are) and mark the answer cut instead of complete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference_host.providers.pyindex.chains import CALL
from reference_host.providers.pyindex.factmodel import Binding

if TYPE_CHECKING:
    from reference_host.providers.pyindex.index import PythonIndex

MAX_EXAMPLES = 5


def first_binding(index: PythonIndex, path: str, scope_index: int, name: str) -> Binding | None:
    """The binding of *name* seen from a scope (enclosing scopes included), if any."""
    scopes = index.files[path].facts.scopes
    at = scope_index
    while at >= 0:
        binding = scopes[at].bindings.get(name)
        if binding is not None:
            return binding
        at = scopes[at].parent
    return None


def note_unresolved(
    index: PythonIndex,
    path: str,
    scope: int,
    chain: tuple[str, ...],
    is_call: bool,
    line: int,
    consumed: int,
) -> None:
    """Count the attribute names of a use (of *chain* in *scope*, zero-based *line*) whose
    resolution stopped before them, unless the chain starts at an import the index does not hold
    (a third-party or stdlib module)."""
    if len(chain) < 2 or consumed >= len(chain):
        return
    if consumed == 0:
        binding = first_binding(index, path, scope, chain[0])
        if binding is not None and binding[0] == "import":
            return
    counted, examples, last = index.unresolved, index.unresolved_at, len(chain) - 1
    for position in range(max(consumed, 1), len(chain)):
        name = chain[position]
        if name == CALL:
            continue
        counts = counted.get(name)
        if counts is None:
            counts = counted[name] = [0, 0]
            examples[name] = []
        counts[0] += 1
        counts[1] += is_call and position == last
        samples = examples[name]
        if len(samples) < MAX_EXAMPLES:
            samples.append((path, line + 1))
