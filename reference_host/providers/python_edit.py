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
from dataclasses import dataclass
from typing import Any

import anyio

from asp_protocol.errors import AspError, ErrorCode
from reference_host.providers import PYTHON_EDIT
from reference_host.providers.editing import (
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
from reference_host.providers.pyindex import InspectEngine, PythonIndex, python_tree
from reference_host.providers.pyindex.rename import plan_rename
from reference_host.providers.pyindex.unused_imports import apply_fixes, unused_import_fixes
from reference_host.providers.runtime import Call, ProviderRuntime, run_stdio

OPERATIONS = ["rename", "organize-imports"]
IMPORT_OPERATIONS = ("remove-unused-imports", "organize-imports")
READ_BATCH = 256
MAX_TEXTS = 20000


@dataclass(frozen=True)
class Loaded:
    """The session's Python files as this provider read them: index, texts and blobs by path."""

    index: PythonIndex
    texts: dict[str, str]
    blobs: dict[str, str]


class PythonEditProvider(ProviderRuntime):
    """The runtime plus the inspect engine and the decoded text of every blob it parsed."""

    def __init__(self) -> None:
        super().__init__(
            provider_id=PYTHON_EDIT.id,
            fingerprint=PYTHON_EDIT.fingerprint(),
            capabilities={"edit": edit_capability(OPERATIONS)},
        )
        self.engine = InspectEngine()
        self.texts: dict[str, str] = {}
        self._lock = anyio.Lock()
        self.capability("edit/propose", self.propose)

    async def _load(self, call: Call) -> Loaded:
        """The index of the session's Python files, their texts by path, and blobs by path."""
        listing = await call.callbacks.list_tree(globs=["**/*.py"])
        tree = python_tree({e.path: e.blob_id for e in listing.entries if e.kind == "file"})
        wanted = [b for b in dict.fromkeys(tree.values()) if b not in self.texts]
        for start in range(0, len(wanted), READ_BATCH):
            served, _ = await call.callbacks.read_each(wanted[start : start + READ_BATCH])
            for blob, data in served.items():
                self.engine.add_blob(blob, data)
                self.texts[blob] = data.decode("utf-8", "replace")
        while len(self.texts) > MAX_TEXTS:
            self.texts.pop(next(iter(self.texts)))
        readable = {p: b for p, b in tree.items() if b in self.texts and self.engine.facts(b)}
        index = await anyio.to_thread.run_sync(self.engine.index, readable)
        return Loaded(index, {p: self.texts[b] for p, b in readable.items()}, readable)

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
        async with self._lock:
            loaded = await self._load(call)
        if request.operation == "rename":
            body = self._rename(request, provider, loaded)
        else:
            body = self._imports(request, provider, loaded)
        return {"proposal": body}

    def _rename(
        self, request: ProposeRequest, provider: dict[str, Any], loaded: Loaded
    ) -> dict[str, Any]:
        index, texts, blobs = loaded.index, loaded.texts, loaded.blobs
        symbol, new = request.args.get("symbol"), request.args.get("newName")
        if isinstance(symbol, dict):
            symbol = symbol.get("id")
        if not isinstance(symbol, str) or not isinstance(new, str):
            raise AspError(ErrorCode.INVALID_PARAMS, "rename needs args {symbol, newName} strings")
        outcome = plan_rename(index, texts, symbol, new)
        if outcome.refusal == "invalid":
            return status_plan(
                request,
                provider,
                [],
                "error",
                {"reason": "malformed-request", "detail": outcome.detail},
            )
        if outcome.refusal is not None:
            reason = (
                "ambiguous-target" if outcome.refusal == "ambiguous" else "unresolved-reference"
            )
            return status_plan(
                request,
                provider,
                [],
                "incomplete",
                {"reason": reason, "detail": outcome.detail, "recoverable": False},
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
        for path in paths:
            edits = FileEdits(path, blobs[path], split_lines(texts[path]))
            for line, col in sorted(outcome.sites.get(path, ())):
                edits.replace(line, col, col + len(outcome.old), new)
                count += 1
            for token in outcome.strings.get(path, []):
                quote = token.text[0]
                edits.replace(token.start[0], token.start[1], token.end[1], f"{quote}{new}{quote}")
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
        )

    def _imports(
        self, request: ProposeRequest, provider: dict[str, Any], loaded: Loaded
    ) -> dict[str, Any]:
        index, texts, blobs = loaded.index, loaded.texts, loaded.blobs
        wanted = request.args.get("paths", request.scope)
        if not isinstance(wanted, list) or not all(isinstance(p, str) for p in wanted):
            raise AspError(ErrorCode.INVALID_PARAMS, "remove-unused-imports needs args {paths}")
        paths = [p for p in sorted(texts) if in_scope(p, wanted) and in_scope(p, request.scope)]
        files, removed, skipped = [], 0, []
        for path in paths:
            fixes = unused_import_fixes(path, index.files[path].facts, texts[path])
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
        extra: dict[str, Any] = {}
        if skipped:
            extra["warnings"] = [
                f"left {p} unchanged: the result would not compile" for p in skipped
            ]
        return plan(
            request,
            provider,
            [blobs[f.path] for f in files],
            files,
            rationale=f"Removed {removed} unused import(s) in {len(files)} of {len(paths)} file(s).",
            **extra,
        )


def main(argv: list[str] | None = None) -> int:
    """Serve one edit session on stdin/stdout (argv is accepted for symmetry and ignored)."""
    return run_stdio(PythonEditProvider())


if __name__ == "__main__":
    sys.exit(main())
