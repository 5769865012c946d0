"""The fact records of one Python blob: scopes with their bindings, definitions, uses, imports.

They depend only on the bytes (see `facts.py`, which makes them), are cached per blob id and are
pickled between the parse workers and the provider, so they are plain slotted dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# A zero-based (line, char, end_line, end_char) range; chars count code points, not bytes.
Span = tuple[int, int, int, int]

# How a name is bound in a scope:
#   ("def", qualname)                 a class or function defined in this module
#   ("import", module, attr, level)   `import module` (attr None) or `from module import attr`
#   ("instance", chain)               assigned once from `Chain(...)` (a class, or a function whose
#                                     return is annotated), `with Chain(...) as x`, or `x: Chain`
#   ("element", chain)                `for x in chain(...)`, a function annotated `-> Iterator[C]`
#   ("local",)                        any other binding: unresolvable statically
Binding = tuple[object, ...]
LOCAL: Binding = ("local",)


@dataclass(slots=True)
class Scope:
    """A module, class or function namespace; `owner` is the qualname uses inside are charged to."""

    owner: str
    kind: str
    parent: int
    bindings: dict[str, Binding] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    self_name: str | None = None
    class_scope: int = -1


@dataclass(slots=True)
class DefFact:
    qualname: str
    name: str
    kind: str  # "class" | "function"
    span: Span
    scope: int  # the scope this definition opens
    parent_scope: int
    shape: str  # hash of the definition's source text, for before/after comparison
    bases: list[tuple[str, ...]] = field(default_factory=list)
    # functions: the class the return annotation names, and the element class of an annotated
    # iterator/iterable/sequence return (both resolved in `parent_scope`)
    returns: tuple[str, ...] | None = None
    returns_element: tuple[str, ...] | None = None
    # classes: attributes given one evident type (`self.x = C()` in a method, `x: C` in the body):
    # attr -> (binding, scope index the binding's chain resolves in); conflicting ones are dropped
    attrs: dict[str, tuple[Binding, int]] = field(default_factory=dict)


@dataclass(slots=True)
class UseFact:
    scope: int
    chain: tuple[str, ...]
    kind: str  # "call" | "load" | "base" | "decorator"
    span: Span


@dataclass(slots=True)
class ImportFact:
    scope: int
    module: str
    level: int
    name: str | None  # None for `import module`; "*" for a star import
    span: Span
    type_only: bool = False  # under `if TYPE_CHECKING:`: never executed at run time


@dataclass(slots=True)
class ModuleFacts:
    blob: str
    scopes: list[Scope]
    defs: list[DefFact]
    uses: list[UseFact]
    imports: list[ImportFact]
    all_names: list[str] | None = None
    error: str | None = None
    lines: int = 0
