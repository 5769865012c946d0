"""The fact records of one Python blob: scopes with their bindings, definitions, uses, imports.

They depend only on the bytes (see `facts.py`, which makes them), are cached per blob id and are
pickled between the parse workers and the provider, so they are plain slotted dataclasses.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import NamedTuple

# A zero-based (line, char, end_line, end_char) range; chars count code points, not bytes.
Span = tuple[int, int, int, int]

# How a name is bound in a scope:
#   ("def", qualname)                 a class or function defined in this module
#   ("import", module, attr, level)   `import module` (attr None) or `from module import attr`
#   ("instance", chain)               assigned once from `Chain(...)` (a class, or a function whose
#                                     return is annotated), `with Chain(...) as x`, or `x: Chain`
#   ("element", chain)                `for x in chain(...)`, a function annotated `-> Iterator[C]`
#   ("alias", chain)                  assigned once from a bare name or attribute chain
#                                     (`run = compute`): whatever the chain resolves to
#   ("local",)                        any other binding: unresolvable statically
Binding = tuple[object, ...]
LOCAL: Binding = ("local",)
NO_NAMES: frozenset[str] = frozenset()


@dataclass(slots=True)
class Scope:
    """A module, class or function namespace; `owner` is the qualname uses inside are charged to."""

    owner: str
    kind: str
    parent: int
    bindings: dict[str, Binding] = field(default_factory=dict)
    # names declared `global` here (only while collecting); one shared empty set for the rest
    declared_global: AbstractSet[str] = NO_NAMES
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
    bases: tuple[tuple[str, ...], ...] = ()
    # functions: the class the return annotation names, and the element class of an annotated
    # iterator/iterable/sequence return (both resolved in `parent_scope`)
    returns: tuple[str, ...] | None = None
    returns_element: tuple[str, ...] | None = None
    # classes: attributes given one evident type (`self.x = C()` in a method, `x: C` in the body):
    # attr -> (binding, scope index the binding's chain resolves in); conflicting ones are dropped
    # (None for functions: most definitions are, and an empty dict each cost 64 bytes)
    attrs: dict[str, tuple[Binding, int]] | None = None


class UseFact(NamedTuple):
    scope: int
    chain: tuple[str, ...]
    kind: str  # one of USE_KINDS
    span: Span


USE_KINDS = ("call", "load", "base", "decorator")
KIND_CODES = {kind: code for code, kind in enumerate(USE_KINDS)}
_NUMBERS: list[int] = list(range(1024))
_MAX_SHARED = 1 << 20


def shared_numbers(values: array[int]) -> Iterator[int]:
    """*values* as Python ints, the same int object for the same number: CPython makes a new
    object for every int above 256 read out of an array, and the spans of a large tree's
    references hold hundreds of thousands of line numbers (28 bytes each, about 7 MiB on Django)."""
    if not values or min(values) < 0 or (top := max(values)) >= _MAX_SHARED:
        return iter(values)
    if top >= len(_NUMBERS):
        _NUMBERS.extend(range(len(_NUMBERS), top + 1))
    return map(_NUMBERS.__getitem__, values)


class Uses:
    """The uses of one module in columns: a scope, kind, span and chain number per use, and each
    distinct chain once. Uses are most of a module's facts (350,000 in Django's 2,800 modules); as
    objects they took about 230 bytes each, in columns about 25, and a cached entry loads as a
    few byte strings. Iterating yields `UseFact` tuples made on the fly."""

    __slots__ = ("chain_of", "chains", "kinds", "scopes", "spans")

    def __init__(self) -> None:
        self.scopes = array("i")
        self.kinds = bytearray()
        self.spans = array("i")  # four numbers per use
        self.chain_of = array("i")  # index into `chains`
        self.chains: list[tuple[str, ...]] = []

    @classmethod
    def from_lists(
        cls,
        scopes: list[int],
        kinds: list[int],
        spans: list[int],
        chain_of: list[int],
        chains: list[tuple[str, ...]],
    ) -> Uses:
        """Uses from the collector's plain lists (codes of `USE_KINDS`, four span numbers a use):
        appending to lists while collecting and packing once is cheaper than array appends."""
        uses = cls()
        uses.scopes = array("i", scopes)
        uses.kinds = bytearray(kinds)
        uses.spans = array("i", spans)
        uses.chain_of = array("i", chain_of)
        uses.chains = chains
        return uses

    def __len__(self) -> int:
        return len(self.scopes)

    def __iter__(self) -> Iterator[UseFact]:
        chains, kinds, corner = self.chains, USE_KINDS, shared_numbers(self.spans)
        for scope, kind, number, span in zip(
            self.scopes,
            self.kinds,
            self.chain_of,
            zip(corner, corner, corner, corner, strict=True),
            strict=True,
        ):
            yield UseFact(scope, chains[number], kinds[kind], span)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Uses) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def columns(self) -> tuple[bytes, bytes, bytes, bytes, list[tuple[str, ...]]]:
        """The columns as plain values (for marshal, see diskcache.py)."""
        return (
            self.scopes.tobytes(),
            bytes(self.kinds),
            self.spans.tobytes(),
            self.chain_of.tobytes(),
            self.chains,
        )

    @classmethod
    def from_columns(
        cls,
        scopes: bytes,
        kinds: bytes,
        spans: bytes,
        chain_of: bytes,
        chains: list[tuple[str, ...]],
    ) -> Uses:
        """Uses from `columns()`; ValueError when the columns do not agree."""
        uses = cls()
        uses.scopes.frombytes(scopes)
        uses.kinds = bytearray(kinds)
        uses.spans.frombytes(spans)
        uses.chain_of.frombytes(chain_of)
        uses.chains = chains
        count = len(uses.scopes)
        if not (len(uses.kinds) == len(uses.chain_of) == count and len(uses.spans) == 4 * count):
            raise ValueError("use columns of different lengths")
        if (
            max(uses.kinds, default=0) >= len(USE_KINDS)
            or max(uses.chain_of, default=0) >= max(len(chains), 1)
            or min(uses.chain_of, default=0) < 0
        ):
            raise ValueError("use column out of range")
        return uses


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
    uses: Uses
    imports: list[ImportFact]
    all_names: list[str] | None = None
    error: str | None = None
    lines: int = 0
