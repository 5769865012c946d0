"""Answering `references` / `callers` / `symbols` from part of the tree while the whole index builds.

Once a build has read every blob of the tree (their bytes are kept until it finishes), a query
needs only the files that spell the names it asks about, the files their `as` names are spelled in,
and the files resolving those uses reaches (scoped.py). They are parsed here (or taken from the
build when it already has them), a `ScopedIndex` of them answers, and whatever it reports
`Missing` is added before trying again. Such an answer is the whole index's answer, page for page;
anything that cannot be established that way — the whole tree enumerated, a part too large to be
worth it, a resolution that met a cycle or the depth bound, too many rounds — gives None, and the
caller answers as it did before (the degraded "indexing" refusal).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio.from_thread

from asp_protocol.canonical import blob_id
from reference_host.providers.pyindex.build import Build, Prepared
from reference_host.providers.pyindex.engine import BlobMismatch, InspectEngine, checked_facts
from reference_host.providers.pyindex.facts import ModuleFacts
from reference_host.providers.pyindex.forklink import in_child
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.modules import ModuleName, module_names
from reference_host.providers.pyindex.scoped import Missing, ScopedIndex, binding_names
from reference_host.providers.pyindex.words import Packed, Texts

log = logging.getLogger("asp.python-inspect.early")

T = TypeVar("T")
MAX_ROUNDS = 24
# the share of the tree's source the part may still need parsed: beyond it the whole build is
# about as quick
PART_SHARE = 0.6
# how long an early answer may wait for the build's workers to parse its part (then: none)
MAX_WAIT_S = 5.0
MAX_FORKS = 6  # children tried, each after the facts the one before needed were made
CHILD_GRACE_S = 8.0  # how long a child may compute (a healthy one: well under a second)
SCOPED_VERBS = ("references", "callers", "symbols")


def seeds(verb: str, params: Mapping[str, Any], tree: Mapping[str, str]) -> set[str] | None:
    """The names a query certainly asks about (the rest is found as `Missing`); None when the
    scoped path cannot answer it (a whole-tree or directory listing, another verb)."""
    if verb not in SCOPED_VERBS:
        return None
    if verb == "symbols":
        query = str(params.get("query", "")).strip()
        stripped = query.strip("/")
        if stripped in ("", "*", ".") or any(c in query for c in "*?["):
            return None
        if stripped not in tree and any(p.startswith(stripped + "/") for p in tree):
            return None  # a directory: every file of it
        last = query.rpartition(".")[2]
        return {query, last} if query.isidentifier() or last.isidentifier() else set()
    symbol = params.get("symbol")
    if not isinstance(symbol, dict):
        return None
    text = str(symbol.get("id", "")).strip()
    last = text.rpartition("::")[2].rpartition(".")[2]
    return {last} if last.isidentifier() else set()


class Part:
    """One build's read bytes, with what the scoped path derives from them once: their check
    against the blob ids, the module names of the tree, the facts of the blobs it parsed and
    each file's import bindings. *ask*, if given, asks the build to parse some blobs first and
    says whether it will (their facts then appear in the engine); others are parsed here."""

    def __init__(
        self,
        engine: InspectEngine,
        tree: dict[str, str],
        data: Packed,
        ask: Callable[[set[str]], bool] | None = None,
    ) -> None:
        self.engine = engine
        self.tree = tree
        self.texts = Texts(data)
        self.names: dict[str, ModuleName] = module_names(tree)
        self.facts: dict[str, ModuleFacts] = {}
        self.ask = ask
        self.bindings: dict[str, list[tuple[str, str]]] = {}
        blobs = set(tree.values())
        self.sound = all(blob in data and blob_id(data[blob]) == blob for blob in blobs)
        self.total_bytes = sum(self.texts.size(blob) for blob in blobs if blob in data)

    def known(self, blob: str) -> ModuleFacts | None:
        return self.facts.get(blob) or self.engine.facts(blob)

    def facts_of(self, blobs: set[str], deadline: float) -> dict[str, ModuleFacts] | None:
        """The facts of *blobs*; None when the build did not parse them by *deadline*."""
        wanted = {blob for blob in blobs if self.known(blob) is None}
        if wanted and self.ask is not None and self.ask(wanted):
            while wanted and time.monotonic() < deadline:
                time.sleep(0.01)
                wanted = {blob for blob in wanted if self.engine.facts(blob) is None}
            if wanted:
                return None
        for blob in wanted:
            self.facts[blob] = checked_facts(
                blob, self.texts.data[blob], self.engine.max_file_bytes
            )
        out = {blob: self.known(blob) for blob in blobs}
        return out if all(f is not None for f in out.values()) else None  # type: ignore[return-value]

    def imports_of(self, blob: str, facts: ModuleFacts) -> list[tuple[str, str]]:
        """`binding_names` of a blob's facts, once."""
        found = self.bindings.get(blob)
        if found is None:
            found = self.bindings[blob] = list(binding_names(facts))
        return found


def scoped_answer(
    part: Part,
    words: set[str],
    answer: Callable[[PythonIndex], T],
    max_bytes: int | None = None,
    wait_s: float = MAX_WAIT_S,
) -> T | None:
    """*answer* computed on a scoped index of *part*'s tree that covers *words* and whatever it
    turns out to need; None when that cannot be done exactly (see the module docstring)."""
    if not part.sound:
        return None
    limit = int(PART_SHARE * part.total_bytes) if max_bytes is None else max_bytes
    deadline = time.monotonic() + wait_s
    tree, texts = part.tree, part.texts
    covered, extra = set(words), set[str]()
    spelling: dict[str, set[str]] = {}
    spelled: tuple[frozenset[str], dict[str, ModuleFacts]] = (frozenset(), {})
    try:
        for _round in range(MAX_ROUNDS):
            while True:  # the covered names, closed under `as` names, and the files spelling them
                for word in covered - spelling.keys():
                    spelling[word] = texts.files_with(tree, [word])
                linked = set().union(*spelling.values())
                held = linked | extra
                unparsed = {tree[p] for p in held if part.known(tree[p]) is None}
                if sum(texts.size(blob) for blob in unparsed) > limit:
                    log.info("scoped answer: part too large (%d files)", len(held))
                    return None
                facts = part.facts_of({tree[p] for p in held}, deadline)
                if facts is None:
                    log.info("scoped answer: the build did not parse its part in time")
                    return None
                aliases = {
                    bound
                    for path in linked
                    for written, bound in part.imports_of(tree[path], facts[tree[path]])
                    if written in covered
                }
                if aliases <= covered:
                    break
                covered |= aliases
            index = ScopedIndex(
                {p: (tree[p], facts[tree[p]]) for p in held}, part.names, tree.keys(), covered
            )
            if spelled[0] != index.covered:
                spelled = (index.covered, {})

            def fetch(paths: set[str]) -> dict[str, tuple[str, ModuleFacts]]:
                found = part.facts_of({tree[p] for p in paths}, deadline)
                if found is None:
                    raise Missing(everything=True)
                return {p: (tree[p], found[tree[p]]) for p in paths}

            try:
                index.link(sorted(linked), fetch, spelled[1])
                result = index.settle(fetch, answer, index)
            except Missing as exc:
                if exc.everything or not exc.names - covered:
                    return None
                extra |= index.held() - linked
                covered |= exc.names
                continue
            if index.purity.impure:
                log.info("scoped answer: a cycle or the depth bound was met")
                return None
            log.info(
                "scoped answer from %d of %d files (%d linked, %d rounds, %d parsed here)",
                len(held),
                len(tree),
                len(linked),
                _round + 1,
                len(part.facts),
            )
            return result
    except BlobMismatch:
        return None
    return None


class _NeedFacts(Exception):
    """Raised in a forked child that needs facts the build had not made when it was forked."""

    def __init__(self, blobs: set[str]) -> None:
        super().__init__(len(blobs))
        self.blobs = blobs


def _need(blobs: set[str]) -> bool:
    raise _NeedFacts(blobs)


def early_answer(
    engine: InspectEngine,
    build: Build,
    words: set[str],
    graph: Callable[[Prepared], dict[str, Any]],
) -> tuple[Prepared, dict[str, Any]] | None:
    """The whole answer `graph` gives from a scoped index of a running *build*'s tree (see
    `Builds.reading`), with the prepared tree it is drawn from, or None. Runs in a worker
    thread; the build is asked to parse the part first through the event loop's thread.

    The scoped index is made in a forked child, which sends the answer back and exits: made
    here, in the middle of a build, its objects would be freed among the build's long-lived
    ones and leave the heap fragmented (about 27 MiB more resident after a Salt build). A child
    that needs facts not made yet says which; they are waited for here and a new child tries."""
    if build.part is None:

        def ask(blobs: set[str]) -> bool:
            prioritize = build.seen.prioritize
            if prioritize is not None:
                anyio.from_thread.run_sync(prioritize, blobs)
            return prioritize is not None

        build.part = Part(engine, build.tree, build.seen.data, ask)
    part: Part = build.part
    seen = build.seen
    prepared = Prepared(
        PythonIndex({}, {}), build.tree, [], build.truncated, seen.cached, False, build.unnamable
    )

    def answer(index: PythonIndex) -> dict[str, Any]:
        prepared.index = index
        return graph(prepared)

    if not hasattr(os, "fork"):
        whole = scoped_answer(part, words, answer)
        return (prepared, whole) if whole is not None else None

    def attempt() -> tuple[str, Any]:
        part.ask = _need  # in the child only: it cannot wait for the build
        try:
            whole = scoped_answer(part, words, answer)
        except _NeedFacts as need:
            return ("need", sorted(need.blobs))
        return ("answer", whole) if whole is not None else ("none", None)

    deadline = time.monotonic() + MAX_WAIT_S
    for _fork in range(MAX_FORKS):
        outcome = in_child(attempt, CHILD_GRACE_S)
        if not isinstance(outcome, tuple) or len(outcome) != 2:
            return None
        kind, value = outcome
        if kind == "answer" and isinstance(value, dict):
            prepared.index = PythonIndex({}, {})
            return prepared, value
        if kind != "need" or part.facts_of(set(value), deadline) is None:
            return None
    return None
