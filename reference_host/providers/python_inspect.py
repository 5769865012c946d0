"""`asp-python-inspect`: the built-in Python inspect provider (docs/architecture.md#protocol-map).

Answers `sense/symbols|references|callers|callees|impact` (and the `inspect/<verb>` aliases) in
the graph envelope of sense-graph.schema.json, as of the effective baseline (the session's, or
the request's override). Content arrives only through `workspace/listTree` and
`workspace/readBlob`; facts are cached per blob id and whole indexes per tree, so a second query
on an unchanged baseline does no reading and no parsing. `validAsOf.blobs` lists the blobs of
the files the answer was drawn from. A `limit` param (extension, default 1000) bounds nodes and
sets `truncated` (`data.truncated` for graph results, whose envelope has no such field).
"""

from __future__ import annotations

import functools
import logging
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from asp_protocol.canonical import canonical_json
from asp_protocol.errors import (
    AspError,
    ConnectionClosed,
    ErrorCode,
    ProtocolViolation,
    RequestTimeout,
)
from asp_protocol.framing import UnencodableMessage
from reference_host.providers import PYTHON_INSPECT
from reference_host.providers.memory import IdleTrimmer
from reference_host.providers.pyindex import (
    ChangedFile,
    InspectEngine,
    queries,
)
from reference_host.providers.pyindex.build import INDEXING, Builds, Prepared, session_callbacks
from reference_host.providers.pyindex.diskcache import DEFAULT_MAX_BYTES as DEFAULT_CACHE_BYTES
from reference_host.providers.pyindex.diskcache import FactCache
from reference_host.providers.pyindex.early import early_answer, seeds
from reference_host.providers.pyindex.engine import BlobMismatch, Listing
from reference_host.providers.pyindex.impact import impact, unchanged
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.modules import module_names
from reference_host.providers.pyindex.options import DEFAULT_WAIT_S, build_options, build_parser
from reference_host.providers.pyindex.paging import (
    GRAPH_LISTS,
    IMPACT_LISTS,
    Answers,
    cut,
    item_paths,
    measure,
)
from reference_host.providers.pyindex.params import VERBS, InspectRequest, parse_request
from reference_host.providers.pyindex.reading import READ_BATCH, read_facts
from reference_host.providers.pyindex.unindexed import (
    UnindexedTexts,
    answer_words,
    mark,
    unindexed_files,
)
from reference_host.providers.runtime import Call, ProviderRuntime, run_stdio

log = logging.getLogger("asp.python-inspect")

NODE_KINDS = ["file", "module", "class", "function", "test"]
EDGE_KINDS = ["calls", "imports", "inherits", "contains", "tested-by", "depends-on"]
GLOBBING = ("glob", "substring")
INSPECT_CAPABILITY: dict[str, Any] = {
    "verbs": list(VERBS),
    "scopes": ["changeset", "workspace"],
    "partialResults": True,
    "graph": {"nodeKinds": NODE_KINDS, "edgeKinds": EDGE_KINDS},
}
MAX_CACHED_TREES = 8


class PythonInspectProvider(ProviderRuntime):
    """The runtime plus the engine and its background builds; one lock keeps answering consistent."""

    def __init__(
        self,
        engine: InspectEngine | None = None,
        *,
        wait: float = DEFAULT_WAIT_S,
        hold_requests: int = 0,
        read_batch: int = READ_BATCH,
        cache_dir: Path | None = None,
        cache_max_bytes: int = DEFAULT_CACHE_BYTES,
        hold_index: bool = False,
    ) -> None:
        super().__init__(
            provider_id=PYTHON_INSPECT.id,
            fingerprint=PYTHON_INSPECT.fingerprint(),
            capabilities={"inspect": INSPECT_CAPABILITY},
        )
        self.engine = engine or InspectEngine()
        self.cache = (
            FactCache(cache_dir, self.fingerprint, cache_max_bytes)
            if cache_dir is not None
            else None
        )
        self.builds = Builds(
            self.engine,
            wait=wait,
            hold_requests=hold_requests,
            read_batch=read_batch,
            cache=self.cache,
            hold_index=hold_index,
        )
        self.answers = Answers()
        self.unindexed = UnindexedTexts()  # words of files without facts, read when asked
        self._trees: OrderedDict[str, Listing] = OrderedDict()
        self._lock = anyio.Lock()
        self.idle_trim = IdleTrimmer()
        for verb in VERBS:
            for prefix in ("sense/", "inspect/"):
                self.capability(prefix + verb, self._handler(verb))

    async def serve(self, receive: ByteReceiveStream, send: ByteSendStream) -> int:
        """Serve the session with a task group of its own, where index builds outlive requests."""
        async with anyio.create_task_group() as tg:
            self.builds.attach(tg, session_callbacks(self))
            self.idle_trim.attach(tg)
            code = await super().serve(receive, send)
            tg.cancel_scope.cancel()
        return code

    def _handler(self, verb: str) -> Any:
        async def handle(call: Call) -> dict[str, Any]:
            request = parse_request(verb, call.params)
            try:
                return await self._answer(request, call)
            except (ProtocolViolation, BlobMismatch) as exc:
                raise AspError(
                    ErrorCode.INTERNAL_ERROR, "host-callback-malformed", detail=str(exc)[:300]
                ) from exc
            except UnencodableMessage as exc:  # e.g. a blob id with a lone surrogate
                raise AspError(
                    ErrorCode.INTERNAL_ERROR,
                    "answer-unencodable",
                    detail="a string the host supplied has no UTF-8 form: " + str(exc)[:200],
                ) from exc
            except (RequestTimeout, ConnectionClosed) as exc:
                raise AspError(
                    ErrorCode.HEALTH_NOT_READY,
                    "host-callback-failed",
                    retryable=True,
                    detail=str(exc)[:300],
                ) from exc
            finally:
                self.idle_trim.answered()  # answers are large: give their garbage back when quiet

        return handle

    # -- content ----------------------------------------------------------------------------
    async def _tree(self, call: Call, baseline: dict[str, Any], override: bool) -> Listing:
        key = canonical_json({k: v for k, v in baseline.items() if k != "stampedAt"})
        cached = self._trees.get(key)
        if cached is not None:
            self._trees.move_to_end(key)
            return cached
        try:
            listing = await call.callbacks.list_tree(
                globs=["**/*.py"], baseline=baseline if override else None
            )
        except AspError as error:
            raise AspError(
                ErrorCode.HEALTH_NOT_READY,
                "baseline-unreachable",
                retryable=True,
                detail=f"workspace/listTree refused: {error.message[:200]}",
            ) from error
        entries = {e.path: e.blob_id for e in listing.entries if e.kind == "file"}
        result = Listing.of(key, entries, listing.truncated)
        self._trees[key] = result
        while len(self._trees) > MAX_CACHED_TREES:
            self._trees.popitem(last=False)
        return result

    async def _prepare(
        self, call: Call, request: InspectRequest
    ) -> tuple[Prepared, dict[str, Any], dict[str, Any] | None]:
        """The prepared index, the baseline, and the whole answer when a running build could
        already give it exactly from part of the tree (early.py), which is then tried as soon
        as the build has read the tree, within the usual wait."""
        baseline = request.baseline or call.session.baseline
        if not isinstance(baseline, dict) or not isinstance(baseline.get("rev"), str):
            raise AspError(ErrorCode.HEALTH_NOT_READY, "no-session-baseline", retryable=True)
        listing = await self._tree(call, baseline, request.baseline is not None)

        async def report(percentage: int, message: str) -> None:
            await call.progress(percentage=percentage, message=message)

        words = seeds(request.verb, request.params, listing.tree)
        deadline = anyio.current_time() + self.builds.wait
        args = (listing.key, listing.tree, listing.truncated, report, listing.unnamable)
        try:
            from_graph = request.verb == "impact" and unchanged(request.params["changeset"])
            prepared = await self.builds.prepared(
                *args, until_read=words is not None, graph=from_graph
            )
        except AspError as error:
            build = self.builds.reading(listing.key) if error.message == INDEXING else None
            if build is None or words is None:
                raise
            answered = canonical_json([baseline, request.verb, request.answer_params()])
            if self.answers.get(answered) is not None:  # another page of an early answer
                return Prepared(PythonIndex({}, {}), build.tree, [], False), baseline, None
            graph = functools.partial(self._graph, request)
            found = await anyio.to_thread.run_sync(early_answer, self.engine, build, words, graph)
            if found is not None:
                return found[0], baseline, found[1]
            left = max(0.0, deadline - anyio.current_time())
            prepared = await self.builds.prepared(*args, wait=left)
        return prepared, baseline, None

    # -- verbs ------------------------------------------------------------------------------
    async def _one_file(
        self, call: Call, request: InspectRequest
    ) -> tuple[Prepared, dict[str, Any]] | None:
        """`symbols` of one file while the whole index still builds: that file's definitions
        depend on its own facts and the tree's module names only, so the answer is complete."""
        baseline = request.baseline or call.session.baseline
        if request.verb != "symbols" or not isinstance(baseline, dict):
            return None
        listing = await self._tree(call, baseline, request.baseline is not None)
        tree = listing.tree
        path = str(request.params["query"]).strip().strip("/")
        if path not in tree:
            return None
        async with self._lock:
            facts = await read_facts(self.engine, call.callbacks, [tree[path]])
        if tree[path] not in facts:
            return None
        index = PythonIndex({path: (tree[path], facts[tree[path]])}, module_names(tree))
        prepared = Prepared(
            index, {path: tree[path]}, [], listing.truncated, unnamable=listing.unnamable
        )
        return prepared, baseline

    async def _answer(self, request: InspectRequest, call: Call) -> dict[str, Any]:
        """The page of the whole answer that `offset` / `pageBytes` select (see pyindex/paging)."""
        try:
            prepared, baseline, scoped = await self._prepare(call, request)
            early = False
        except AspError as error:
            found = await self._one_file(call, request) if error.message == INDEXING else None
            if found is None:
                raise
            (prepared, baseline), early, scoped = found, True, None
        key = canonical_json([baseline, request.verb, request.answer_params()])
        lists = IMPACT_LISTS if request.verb == "impact" else GRAPH_LISTS
        cached = self.answers.get(key) if not early else None
        if cached is None and scoped is not None:
            await self._unindexed(call, request, scoped)
            cached = self.answers.put(key, scoped, lists)
        elif cached is None and early:
            whole = self._graph(request, prepared)
            await self._unindexed(call, request, whole)
            cached = whole, measure(whole, lists)
        elif cached is None:
            if request.verb == "impact":
                whole = await self._impact(call, request, prepared)
            else:
                whole = self._graph(request, prepared)
            await self._unindexed(call, request, whole)
            cached = self.answers.put(key, whole, lists)
        whole, measures = cached
        body = {k: v for k, v in whole.items() if not k.startswith("_")}
        page, following, paths = cut(body, lists, request.offset, request.page_bytes, measures)
        drawn = prepared.blobs(paths | item_paths(page, ()))
        blobs = sorted(set(drawn) | set(whole.get("_read", ())))
        page["validAsOf"] = {"rev": baseline["rev"], "blobs": blobs}
        if request.verb == "impact":
            page["truncated"] = bool(body.get("truncated")) or following is not None
            return page
        page["data"] = {
            **body["data"],
            "page": {
                "offset": {name: request.offset.get(name, 0) for name in lists},
                "next": following,
                "total": {name: len(body.get(name, [])) for name in lists},
                "pageBytes": request.page_bytes,
            },
        }
        return page

    async def _unindexed(self, call: Call, request: InspectRequest, whole: dict[str, Any]) -> None:
        """Mark *whole* not exhaustive when a file without facts may hold what it is about (the
        files are those of the index it was computed from, maybe in a forked child: early.py)."""
        files: dict[str, tuple[str, str]] = whole.pop("_unindexed", {})
        if not files:
            return
        data = whole.get("data") or {}
        if request.verb == "symbols" and data.get("mode") != "name":
            # a file, directory, module or the workspace: its own files that have no facts;
            # a glob or substring query: any of them
            listed = data.get("parseErrors") if data.get("mode") not in GLOBBING else files
            missing = {p: files[p][1] for p in listed or () if p in files}
        else:
            symbol = request.params.get("query" if request.verb == "symbols" else "symbol")
            if isinstance(symbol, dict):  # {"id": ...}
                symbol = symbol.get("id")
            words = answer_words(symbol if isinstance(symbol, str) else "", whole)
            missing = await self.unindexed.may_spell(call.callbacks, files, words)
        mark(whole, missing, graph=request.verb != "impact")

    def _graph(self, request: InspectRequest, prepared: Prepared) -> dict[str, Any]:
        params, index = request.params, prepared.index
        if request.verb == "symbols":
            graph, _paths = queries.symbols(
                index, params["query"], params.get("kinds"), request.limit
            )
        elif request.verb == "references":
            graph, _paths = queries.references(
                index, params["symbol"], params.get("scope"), request.limit
            )
        else:
            walk = queries.callers if request.verb == "callers" else queries.callees
            graph, _paths = walk(index, params["symbol"], request.depth or 1, request.limit)
        if prepared.incomplete:  # files it could not look at: never the whole answer
            graph["data"]["incomplete"] = {
                "unreadable": prepared.unreadable[:100],
                "treeTruncated": prepared.tree_truncated,
            }
            if prepared.unnamable:
                graph["data"]["incomplete"]["unnamable"] = list(prepared.unnamable[:100])
            graph["data"]["truncated"] = True
        graph["_unindexed"] = unindexed_files(index)
        graph["data"]["indexedFiles"] = len(prepared.tree)
        graph["data"]["factsFromCache"] = prepared.from_cache
        graph["data"]["indexFromCache"] = prepared.index_from_cache
        return graph

    async def _impact(
        self, call: Call, request: InspectRequest, prepared: Prepared
    ) -> dict[str, Any]:
        changes = request.params["changeset"]["changes"]
        blobs = [
            c[k]
            for c in changes
            for k in ("before", "after")
            if k in c and c["path"].endswith(".py")
        ]
        async with self._lock:
            facts = await read_facts(self.engine, call.callbacks, blobs)
        changed = [
            ChangedFile(
                path=c["path"],
                kind=c["kind"],
                from_path=c.get("from"),
                before=facts.get(c.get("before", "")),
                after=facts.get(c.get("after", "")),
            )
            for c in changes
        ]
        body, _paths = impact(
            prepared.index, changed, request.params["scope"], request.depth, request.limit
        )
        body["truncated"] = body["truncated"] or prepared.incomplete
        body["_unindexed"] = unindexed_files(prepared.index)
        body["_read"] = sorted(b for b in blobs if b in facts)
        return body


def main(argv: list[str] | None = None) -> int:
    """Serve one inspect session on stdin/stdout; the options are settings of the trusted manifest."""
    parser = build_parser("asp-python-inspect")
    parser.add_argument(
        "--hold-build-index",
        action="store_true",
        help="test only: a build reads and parses its tree but never indexes it",
    )
    parser.add_argument("--read-batch", type=int, default=READ_BATCH, help="blobs per readBlob")
    args = parser.parse_args(argv)
    options = build_options(args)
    provider = PythonInspectProvider(
        wait=options.wait,
        hold_requests=options.hold_requests,
        read_batch=max(1, min(READ_BATCH, args.read_batch)),
        cache_dir=options.cache_dir,
        cache_max_bytes=options.cache_max_bytes,
        hold_index=args.hold_build_index,
    )
    return run_stdio(provider)


if __name__ == "__main__":
    sys.exit(main())
