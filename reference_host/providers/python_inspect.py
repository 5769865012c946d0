"""`asp-python-inspect`: the built-in Python inspect provider (PROTOCOL §5.9, §6.9).

Answers `sense/symbols|references|callers|callees|impact` (and the `inspect/<verb>` aliases) in
the graph envelope of sense-graph.schema.json, as of the effective baseline (the session's, or
the request's override). Content arrives only through `workspace/listTree` and
`workspace/readBlob`; facts are cached per blob id and whole indexes per tree, so a second query
on an unchanged baseline does no reading and no parsing. `validAsOf.blobs` lists the blobs of
the files the answer was drawn from. A `limit` param (extension, default 1000) bounds nodes and
sets `truncated` (`data.truncated` for graph results, whose envelope has no such field).
"""

from __future__ import annotations

import logging
import sys
from collections import OrderedDict
from typing import Any

import anyio

from asp_protocol.canonical import canonical_json
from asp_protocol.errors import (
    AspError,
    ConnectionClosed,
    ErrorCode,
    ProtocolViolation,
    RequestTimeout,
)
from reference_host.providers import PYTHON_INSPECT
from reference_host.providers.pyindex import (
    ChangedFile,
    InspectEngine,
    PythonIndex,
    python_tree,
    queries,
)
from reference_host.providers.pyindex.engine import BlobMismatch
from reference_host.providers.pyindex.facts import ModuleFacts
from reference_host.providers.pyindex.impact import impact
from reference_host.providers.pyindex.params import VERBS, InspectRequest, parse_request
from reference_host.providers.runtime import Call, ProviderRuntime, run_stdio

log = logging.getLogger("asp.python-inspect")

NODE_KINDS = ["file", "module", "class", "function", "test"]
EDGE_KINDS = ["calls", "imports", "inherits", "contains", "tested-by", "depends-on"]
INSPECT_CAPABILITY: dict[str, Any] = {
    "verbs": list(VERBS),
    "scopes": ["changeset", "workspace"],
    "partialResults": False,
    "graph": {"nodeKinds": NODE_KINDS, "edgeKinds": EDGE_KINDS},
}
READ_BATCH = 256
MAX_CACHED_TREES = 8


class Prepared:
    """The index a request is answered from, and what could not be read into it."""

    def __init__(
        self, index: PythonIndex, tree: dict[str, str], unreadable: list[str], truncated: bool
    ) -> None:
        self.index = index
        self.tree = tree
        self.unreadable = unreadable
        self.tree_truncated = truncated

    @property
    def incomplete(self) -> bool:
        return bool(self.unreadable) or self.tree_truncated

    def blobs(self, paths: set[str]) -> list[str]:
        return sorted({self.tree[p] for p in paths if p in self.tree})


class PythonInspectProvider(ProviderRuntime):
    """The runtime plus the engine; one lock keeps the caches consistent across concurrent requests."""

    def __init__(self, engine: InspectEngine | None = None) -> None:
        super().__init__(
            provider_id=PYTHON_INSPECT.id,
            fingerprint=PYTHON_INSPECT.fingerprint(),
            capabilities={"inspect": INSPECT_CAPABILITY},
        )
        self.engine = engine or InspectEngine()
        self._trees: OrderedDict[str, tuple[dict[str, str], bool]] = OrderedDict()
        self._lock = anyio.Lock()
        for verb in VERBS:
            for prefix in ("sense/", "inspect/"):
                self.capability(prefix + verb, self._handler(verb))

    def _handler(self, verb: str) -> Any:
        async def handle(call: Call) -> dict[str, Any]:
            request = parse_request(verb, call.params)
            try:
                async with self._lock:
                    return await self._answer(request, call)
            except (ProtocolViolation, BlobMismatch) as exc:
                raise AspError(
                    ErrorCode.INTERNAL_ERROR, "host-callback-malformed", detail=str(exc)[:300]
                ) from exc
            except (RequestTimeout, ConnectionClosed) as exc:
                raise AspError(
                    ErrorCode.HEALTH_NOT_READY,
                    "host-callback-failed",
                    retryable=True,
                    detail=str(exc)[:300],
                ) from exc

        return handle

    # -- content ----------------------------------------------------------------------------
    async def _tree(
        self, call: Call, baseline: dict[str, Any], override: bool
    ) -> tuple[dict[str, str], bool]:
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
        result = (python_tree(entries), listing.truncated)
        self._trees[key] = result
        while len(self._trees) > MAX_CACHED_TREES:
            self._trees.popitem(last=False)
        return result

    async def _read(self, call: Call, blobs: list[str]) -> dict[str, ModuleFacts]:
        """Facts for *blobs*, reading the uncached ones in batches; refused blobs are just absent."""
        out: dict[str, ModuleFacts] = {}
        wanted = []
        for blob in dict.fromkeys(blobs):
            facts = self.engine.facts(blob)
            if facts is not None:
                out[blob] = facts
            else:
                wanted.append(blob)
        for start in range(0, len(wanted), READ_BATCH):
            served, refused = await call.callbacks.read_each(wanted[start : start + READ_BATCH])
            if refused:
                log.info("host refused %d blob(s)", len(refused))
            parsed = await anyio.to_thread.run_sync(
                lambda s=served: {b: self.engine.add_blob(b, d) for b, d in s.items()}  # type: ignore[misc]
            )
            out.update(parsed)
        return out

    async def _prepare(
        self, call: Call, request: InspectRequest
    ) -> tuple[Prepared, dict[str, Any]]:
        baseline = request.baseline or call.session.baseline
        if not isinstance(baseline, dict) or not isinstance(baseline.get("rev"), str):
            raise AspError(ErrorCode.HEALTH_NOT_READY, "no-session-baseline", retryable=True)
        tree, truncated = await self._tree(call, baseline, request.baseline is not None)
        facts = await self._read(call, list(tree.values()))
        readable = {p: b for p, b in tree.items() if b in facts}
        unreadable = sorted(set(tree) - set(readable))
        index = await anyio.to_thread.run_sync(self.engine.index, readable)
        return Prepared(index, readable, unreadable, truncated), baseline

    # -- verbs ------------------------------------------------------------------------------
    async def _answer(self, request: InspectRequest, call: Call) -> dict[str, Any]:
        prepared, baseline = await self._prepare(call, request)
        params, index = request.params, prepared.index
        if request.verb == "impact":
            return await self._impact(call, request, prepared, baseline)
        if request.verb == "symbols":
            graph, paths = queries.symbols(
                index, params["query"], params.get("kinds"), request.limit
            )
        elif request.verb == "references":
            graph, paths = queries.references(
                index, params["symbol"], params.get("scope"), request.limit
            )
        else:
            walk = queries.callers if request.verb == "callers" else queries.callees
            graph, paths = walk(index, params["symbol"], request.depth or 1, request.limit)
        if prepared.incomplete:
            graph["data"]["incomplete"] = {
                "unreadable": prepared.unreadable[:100],
                "treeTruncated": prepared.tree_truncated,
            }
        graph["data"]["indexedFiles"] = len(prepared.tree)
        graph["validAsOf"] = {"rev": baseline["rev"], "blobs": prepared.blobs(paths)}
        return graph

    async def _impact(
        self, call: Call, request: InspectRequest, prepared: Prepared, baseline: dict[str, Any]
    ) -> dict[str, Any]:
        changes = request.params["changeset"]["changes"]
        blobs = [
            c[k]
            for c in changes
            for k in ("before", "after")
            if k in c and c["path"].endswith(".py")
        ]
        facts = await self._read(call, blobs)
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
        body, paths = impact(
            prepared.index, changed, request.params["scope"], request.depth, request.limit
        )
        read = {b for b in blobs if b in facts}
        body["truncated"] = body["truncated"] or prepared.incomplete
        body["validAsOf"] = {
            "rev": baseline["rev"],
            "blobs": sorted(read | set(prepared.blobs(paths))),
        }
        return body


def main(argv: list[str] | None = None) -> int:
    """Serve one inspect session on stdin/stdout (argv is accepted for symmetry and ignored)."""
    return run_stdio(PythonInspectProvider())


if __name__ == "__main__":
    sys.exit(main())
