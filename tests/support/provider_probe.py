"""A minimal independent host that runs one provider process, to observe its raw Assessment.

Conformance tests use it only to *look at* what a provider returns (schema validity, freshness
echo, configDigest). It plays the host role itself — serving the callbacks from an in-memory
snapshot — and its output never reaches a decision: no gate is ever satisfied through it.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import anyio

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.jsonrpc import JsonRpcEndpoint

PROBE_BASELINE = {"rev": "tree:sha256:" + "0" * 64}
GRANT = {
    "read": ["**/*"],
    "write": False,
    "network": False,
    "resourceLimits": {"cpuPct": 50, "memoryMb": 512, "wallclockMs": 30000, "fd": 256},
}


@dataclass
class ProbeResult:
    initialize: Any = None
    initialize_error: AspError | None = None
    assessment: Any = None
    error: AspError | None = None
    served: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    changeset: dict[str, Any] = field(default_factory=dict)


def _snapshot(
    before: dict[str, bytes], after: dict[str, bytes | None]
) -> tuple[dict[str, Any], dict[str, bytes]]:
    blobs = {blob_id(data): data for data in before.values()}
    changes: list[dict[str, Any]] = []
    for path, data in after.items():
        old = before.get(path)
        if data is None:
            changes.append({"path": path, "kind": "delete", "before": blob_id(old or b"")})
            continue
        blobs[blob_id(data)] = data
        if old is None:
            changes.append({"path": path, "kind": "create", "after": blob_id(data)})
        else:
            changes.append(
                {"path": path, "kind": "modify", "before": blob_id(old), "after": blob_id(data)}
            )
    return {"baseline": PROBE_BASELINE, "changes": changes}, blobs


def probe(
    module_args: list[str],
    before: dict[str, bytes],
    after: dict[str, bytes | None],
    *,
    protocol: str = "asp/1.0",
    evaluate_extra: dict[str, Any] | None = None,
    timeout: float = 20.0,
) -> ProbeResult:
    """Spawn `python <module_args>`, initialize it, evaluate the before→after change once."""
    return anyio.run(_probe, module_args, before, after, protocol, evaluate_extra or {}, timeout)


async def _probe(
    module_args: list[str],
    before: dict[str, bytes],
    after: dict[str, bytes | None],
    protocol: str,
    extra: dict[str, Any],
    timeout: float,
) -> ProbeResult:
    changeset, blobs = _snapshot(before, after)
    out = ProbeResult(changeset=changeset)
    tree = [{"path": p, "blobId": blob_id(d), "kind": "file"} for p, d in sorted(before.items())]

    async def list_tree(params: Any, ctx: Any) -> Any:
        return {"entries": tree}

    async def read_blob(params: Any, ctx: Any) -> Any:
        wanted = params.get("blobs", []) if isinstance(params, dict) else []
        unknown = [b for b in wanted if b not in blobs]
        if unknown:
            out.refused.update(unknown)
            raise AspError(
                ErrorCode.SCOPE_DENIED, "blob not in the session", detail=unknown[0][:80]
            )
        out.served.update(wanted)
        return {
            "blobs": [{"id": b, "encoding": "utf-8", "bytes": blobs[b].decode()} for b in wanted]
        }

    process = await anyio.open_process(
        [sys.executable, *module_args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin and process.stdout
    endpoint = JsonRpcEndpoint(process.stdout, process.stdin, name="probed-provider")
    endpoint.register("workspace/listTree", list_tree)
    endpoint.register("workspace/readBlob", read_blob)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.serve)
            with anyio.fail_after(timeout):
                try:
                    out.initialize = await endpoint.request(
                        "initialize",
                        {
                            "protocolVersion": protocol,
                            "host": {"name": "conformance-probe", "version": "0"},
                            "workspace": {"root": "/probe", "baseline": PROBE_BASELINE},
                        },
                    )
                except AspError as error:
                    out.initialize_error = error
                else:
                    await endpoint.notify(
                        "initialized", {"grantedPermissions": GRANT, "baseline": PROBE_BASELINE}
                    )
                    params = {
                        "changeset": changeset,
                        "scope": "changeset",
                        "comparison": "all",
                        **extra,
                    }
                    try:
                        out.assessment = await endpoint.request("check/evaluate", params)
                    except AspError as error:
                        out.error = error
                    await endpoint.notify("exit")
            tg.cancel_scope.cancel()
    finally:
        with anyio.move_on_after(5, shield=True):
            await process.stdin.aclose()
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
    return out
