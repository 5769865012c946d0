"""What the rules across files need to know of a module's state, by blob id: the top-level names
it binds, the names its literal `__all__` lists and the parameters of its plain functions and
classes.

Telling what a change removed means two parses of every changed module. On a release-sized
change (Django 5.1.4 -> 5.2.19 as one change: 540 changed modules) those parses, one after the
other in the provider's own process, pushed an evaluation that took 13.6 s past the gate's
30 s budget. Summaries are small, so they are made by forked worker processes when there are
many (`check_fork`) and kept by blob id: a later evaluation of the same
states parses nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from reference_host.providers.check_calls import Signature, plain_functions
from reference_host.providers.check_fork import judged
from reference_host.providers.check_imports import parse, top_level_names
from reference_host.providers.check_uses import literal_all

_KEPT = 20_000


@dataclass(frozen=True)
class Summary:
    """A module state's top-level names (None: it may bind names it does not spell) and what
    its plain functions and classes take; `parsed` is False for bytes that do not parse."""

    parsed: bool
    names: frozenset[str] | None
    signatures: dict[str, Signature]
    exported: frozenset[str] | None = None  # a literal top-level `__all__`, when there is one


UNPARSED = Summary(False, None, {})


def summarize(data: bytes) -> Summary:
    tree = parse(data)
    if tree is None:
        return UNPARSED
    names, exported = top_level_names(tree), literal_all(tree)
    return Summary(
        True,
        frozenset(names) if names is not None else None,
        plain_functions(tree),
        frozenset(exported) if exported is not None else None,
    )


def _summarize_chunk(chunk: list[tuple[str, bytes]], _: None) -> list[tuple[str, Summary]]:
    return [(blob, summarize(data)) for blob, data in chunk]


class Summaries:
    """Summaries by blob id, bounded LRU (one per provider process)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, Summary] = OrderedDict()

    def get(self, blob: str) -> Summary | None:
        found = self._kept.get(blob)
        if found is not None:
            self._kept.move_to_end(blob)
        return found

    def put(self, blob: str, summary: Summary) -> None:
        self._kept[blob] = summary
        while len(self._kept) > _KEPT:
            self._kept.popitem(last=False)

    async def of(self, blobs: dict[str, bytes]) -> dict[str, Summary]:
        """The summary of each blob of *blobs* (id -> bytes), made where it is missing: in a
        worker thread for a few, on the worker processes for many."""
        todo = [(b, d) for b, d in blobs.items() if self.get(b) is None]
        for blob, summary in await judged(todo, _summarize_chunk, None):
            self.put(blob, summary)
        return {b: s for b in blobs if (s := self.get(b)) is not None}
