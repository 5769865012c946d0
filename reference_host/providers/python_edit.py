"""`asp-python-edit`: the built-in Python edit provider (PROTOCOL §5.4, §6.8).

Operations: `rename` (args `{symbol, newName}`; a symbol id `path::Qual.name`, a dotted name or a
bare name, as inspect resolves them) and `remove-unused-imports` (args `{paths}`, files or
directories; alias `organize-imports`), the fix for `python/unused-import` findings. Both are
computed on the inspect engine's index (`pyindex`: the same facts, cache and resolution as
`asp-python-inspect`), with content only from `workspace/listTree` and `workspace/readBlob`. The
answer is an EditPlan of UTF-16 text edits bound to the session baseline, each file's
`expectedDigest` the blob read; nothing is ever written. A rename the index cannot prove safe is
`incomplete` (unresolved or ambiguous), a bad request `error`, an unknown operation `unsupported`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from asp_protocol.canonical import canonical_json
from asp_protocol.errors import AspError, ErrorCode
from reference_host.providers import PYTHON_EDIT
from reference_host.providers.editing import (
    BlobCache,
    FileEdits,
    ProposeRequest,
    edit_capability,
    in_scope,
    parse_propose,
    plan,
    provider_block,
    split_lines,
    status_plan,
)
from reference_host.providers.pyindex import InspectEngine
from reference_host.providers.pyindex.build import INDEXING, Builds, session_callbacks
from reference_host.providers.pyindex.diskcache import DEFAULT_MAX_BYTES as DEFAULT_CACHE_BYTES
from reference_host.providers.pyindex.diskcache import FactCache
from reference_host.providers.pyindex.engine import Listing
from reference_host.providers.pyindex.loaded import Loaded
from reference_host.providers.pyindex.options import DEFAULT_WAIT_S, build_options, build_parser
from reference_host.providers.pyindex.rename import (
    files_to_read,
    plan_rename,
    unindexed_refusal,
)
from reference_host.providers.pyindex.unseen import OtherFiles, look_elsewhere
from reference_host.providers.pyindex.unused_imports import (
    apply_fixes,
    kept_imports,
    may_lose_imports,
    unused_import_fixes,
)
from reference_host.providers.runtime import Call, ProviderRuntime, run_stdio

OPERATIONS = ["rename", "organize-imports"]
IMPORT_OPERATIONS = ("remove-unused-imports", "organize-imports")
STRINGS_WAIT_S = 4.0  # how long a rename reads other files (unseen.py) before it says so


def not_ready(progress: str) -> dict[str, Any]:
    """The `incomplete` detail of a request that met the index still building."""
    return {
        "reason": "budget-exhausted",
        "detail": f"the index is still being built ({progress[:200]}); it goes on in the "
        "background: ask again shortly",
        "recoverable": True,
    }


class PythonEditProvider(ProviderRuntime):
    """The runtime plus the inspect engine's background builds (pyindex/build.py): an index is
    built once per baseline in the session's task group, not in the request that asked, so a
    large tree is never rebuilt from scratch by each request that times out; a request that
    meets a build still running answers at once with an `incomplete` plan saying how far it got.
    """

    def __init__(
        self,
        *,
        wait: float = DEFAULT_WAIT_S,
        cache_dir: Path | None = None,
        cache_max_bytes: int = DEFAULT_CACHE_BYTES,
        hold_requests: int = 0,
    ) -> None:
        super().__init__(
            provider_id=PYTHON_EDIT.id,
            fingerprint=PYTHON_EDIT.fingerprint(),
            capabilities={"edit": edit_capability(OPERATIONS)},
        )
        self.engine = InspectEngine()
        cache = (
            FactCache(cache_dir, self.fingerprint, cache_max_bytes)
            if cache_dir is not None
            else None
        )
        self.builds = Builds(self.engine, wait=wait, cache=cache, hold_requests=hold_requests)
        self._lock = anyio.Lock()
        self.blob_cache = BlobCache()
        self.strings_wait = STRINGS_WAIT_S
        self.other_files = OtherFiles()
        self.capability("edit/propose", self.propose)

    async def serve(self, receive: ByteReceiveStream, send: ByteSendStream) -> int:
        """Serve the session with a task group of its own, where index builds outlive requests."""
        async with anyio.create_task_group() as tg:
            self.builds.attach(tg, session_callbacks(self))
            code = await super().serve(receive, send)
            tg.cancel_scope.cancel()
        return code

    async def _load(self, call: Call, request: ProposeRequest) -> Loaded:
        """The finished index of the session's Python files; raises the builds' retryable
        "indexing" AspError while it is still being built."""
        listing = await call.callbacks.list_tree(globs=["**/*.py"])
        entries = {e.path: e.blob_id for e in listing.entries if e.kind == "file"}
        key = canonical_json({k: v for k, v in request.baseline.items() if k != "stampedAt"})
        tree = Listing.of(key, entries, listing.truncated)

        async def report(percentage: int, message: str) -> None:
            await call.progress(percentage=percentage, message=message)

        args = (tree.key, tree.tree, tree.truncated, report, tree.unnamable)
        prepared = await self.builds.prepared(*args)
        files = prepared.index.files
        unindexed = {
            p: b for p, b in prepared.tree.items() if p not in files or files[p].facts.error
        }
        gap = None
        if prepared.tree_truncated:
            gap = "the host's listing of the tree was truncated"
        elif prepared.unnamable:
            gap = f"{len(prepared.unnamable)} Python file name(s) have no UTF-8 form"
        blobs = {p: b for p, b in prepared.tree.items() if p not in unindexed}
        stubs = await call.callbacks.list_tree(globs=["**/*.pyi"])
        typed = {e.path: e.blob_id for e in stubs.entries if e.kind == "file"}
        return Loaded(
            prepared.index, blobs, unindexed, call.callbacks, gap, self.blob_cache, typed, tree.key
        )

    async def propose(self, call: Call) -> dict[str, Any]:
        request = parse_propose(call.params)
        provider = provider_block(self.provider_id, self.version, self.fingerprint)
        if request.operation not in ("rename", *IMPORT_OPERATIONS):
            body = status_plan(
                request,
                provider,
                [],
                "unsupported",
                {
                    "operation": request.operation,
                    "reason": "operation",
                    "detail": "asp-python-edit proposes rename and remove-unused-imports only",
                    "supportedOperations": ["rename", *IMPORT_OPERATIONS],
                },
            )
            return {"proposal": body}
        try:
            async with self._lock:
                loaded = await self._load(call, request)
        except AspError as error:
            if error.message != INDEXING:
                raise
            progress = error.detail or INDEXING
            return {
                "proposal": status_plan(request, provider, [], "incomplete", not_ready(progress))
            }
        if request.operation == "rename":
            body = await self._rename(request, provider, loaded)
        else:
            body = await self._imports(request, provider, loaded)
        return {"proposal": body}

    async def _rename(
        self, request: ProposeRequest, provider: dict[str, Any], loaded: Loaded
    ) -> dict[str, Any]:
        index, blobs = loaded.index, loaded.blobs
        symbol, new = request.args.get("symbol"), request.args.get("newName")
        if isinstance(symbol, dict):
            symbol = symbol.get("id")
        if not isinstance(symbol, str) or not isinstance(new, str):
            raise AspError(ErrorCode.INVALID_PARAMS, "rename needs args {symbol, newName} strings")
        wanted = files_to_read(index, symbol)
        read = await loaded.texts(wanted[1]) if wanted else {}
        texts = {p: t for p, t in read.items() if t is not None}
        outcome = plan_rename(index, texts, symbol, new)
        unread = sorted(set(wanted[1] if wanted else ()) - set(texts))
        if outcome.refusal is None and unread:  # its uses would be left as they are
            outcome.refuse("unresolved", f"{unread[0]} could not be read again; it uses the name")
        elif outcome.refusal is None and loaded.gap is not None:
            outcome.refuse("unresolved", f"{loaded.gap}; they may use {outcome.old}")
        elif outcome.refusal is None and loaded.unindexed:
            why = unindexed_refusal(outcome.old, await loaded.texts(list(loaded.unindexed)))
            if why is not None:
                outcome.refuse("unresolved", why)
        warnings: list[str] = []
        if outcome.refusal is None:
            warnings = await look_elsewhere(
                loaded, texts, outcome, self.strings_wait, self.other_files
            )
        if outcome.refusal == "invalid":
            return status_plan(
                request,
                provider,
                [],
                "error",
                {"reason": "malformed-request", "detail": outcome.detail},
            )
        if outcome.refusal is not None:
            reason = {"ambiguous": "ambiguous-target", "budget": "budget-exhausted"}.get(
                outcome.refusal, "unresolved-reference"
            )
            return status_plan(
                request,
                provider,
                [],
                "incomplete",
                {
                    "reason": reason,
                    "detail": outcome.detail,
                    "recoverable": outcome.refusal == "budget",
                },
            )
        paths = sorted(set(outcome.sites) | set(outcome.strings))
        outside = [p for p in paths if not in_scope(p, request.scope)]
        if outside:
            return status_plan(
                request,
                provider,
                [blobs[p] for p in paths],
                "incomplete",
                {
                    "reason": "partial-coverage",
                    "detail": f"the rename also changes {len(outside)} file(s) outside the "
                    f"requested scope: {', '.join(outside[:10])}",
                    "recoverable": True,
                },
            )
        files = []
        count = 0
        extra: dict[str, Any] = {"warnings": warnings} if warnings else {}
        for path in paths:
            edits = FileEdits(path, blobs[path], split_lines(texts[path]))
            for line, col in sorted(outcome.sites.get(path, ())):
                edits.replace(line, col, col + len(outcome.old), new)
                count += 1
            for token, text in outcome.strings.get(path, []):
                edits.replace(token.start[0], token.start[1], token.end[1], text)
                count += 1
            files.append(edits)
        return plan(
            request,
            provider,
            [blobs[p] for p in paths],
            files,
            annotations=[
                {
                    "path": outcome.target.partition("::")[0],
                    "message": f"Renamed {outcome.target} to {new}: {count} occurrence(s) in "
                    f"{len(files)} file(s).",
                    "data": {"symbol": outcome.target, "occurrences": count},
                }
            ],
            rationale="Definition, resolved references, imports and __all__ entries, "
            "from the inspect index.",
            **extra,
        )

    async def _imports(
        self, request: ProposeRequest, provider: dict[str, Any], loaded: Loaded
    ) -> dict[str, Any]:
        index, blobs = loaded.index, loaded.blobs
        wanted = request.args.get("paths", request.scope)
        if not isinstance(wanted, list) or not all(isinstance(p, str) for p in wanted):
            raise AspError(ErrorCode.INVALID_PARAMS, "remove-unused-imports needs args {paths}")
        chosen = [p for p in sorted(blobs) if in_scope(p, wanted) and in_scope(p, request.scope)]
        candidates = [p for p in chosen if may_lose_imports(p, index.files[p].facts)]
        texts = {p: t for p, t in (await loaded.texts(candidates)).items() if t is not None}
        paths = [p for p in candidates if p in texts]
        found = {p: unused_import_fixes(p, index.files[p].facts, texts[p]) for p in paths}
        losing = {
            p: {n for fix in fixes for n in fix.removed} for p, fixes in found.items() if fixes
        }
        kept = kept_imports(index, losing)  # re-exports and workspace modules stay
        for path, names in kept.items():
            found[path] = unused_import_fixes(
                path, index.files[path].facts, texts[path], set(names)
            )
        files, removed, skipped = [], 0, []
        for path in paths:
            fixes = found[path]
            if not fixes:
                continue
            try:
                compile(apply_fixes(texts[path], fixes), path, "exec")
            except (SyntaxError, ValueError):
                skipped.append(path)
                continue
            lines = split_lines(texts[path])
            edits = FileEdits(path, blobs[path], lines)
            for fix in fixes:
                if fix.text:
                    edits.replace(fix.first, 0, len(lines[fix.last]), fix.text, end_line=fix.last)
                else:
                    edits.delete_lines(fix.first, fix.last)
                removed += len(fix.removed)
            files.append(edits)
        warnings = [f"left {p} unchanged: the result would not compile" for p in skipped]
        warnings += [
            f"left {p} unchanged: the host did not serve it" for p in candidates if p not in texts
        ]
        warnings += [
            f"kept {name} in {path}: {why}"
            for path, names in sorted(kept.items())
            for name, why in sorted(names.items())
        ]
        extra: dict[str, Any] = {"warnings": warnings[:50]} if warnings else {}
        return plan(
            request,
            provider,
            [blobs[f.path] for f in files],
            files,
            rationale=f"Removed {removed} unused import(s) in {len(files)} of {len(chosen)} file(s).",
            **extra,
        )


def main(argv: list[str] | None = None) -> int:
    """Serve one edit session on stdin/stdout; the options are settings of the trusted manifest."""
    options = build_options(build_parser("asp-python-edit").parse_args(argv))
    provider = PythonEditProvider(
        wait=options.wait,
        cache_dir=options.cache_dir,
        cache_max_bytes=options.cache_max_bytes,
        hold_requests=options.hold_requests,
    )
    return run_stdio(provider)


if __name__ == "__main__":
    sys.exit(main())
