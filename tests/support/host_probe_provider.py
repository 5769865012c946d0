"""A check provider that records what the host gives it, for the host's own integration tests.

`python -m support.host_probe_provider --record FILE [--protocol asp/1.0] [--mode MODE] [--inspect]`
(run with `tests/` on PYTHONPATH). It writes one JSON line per event to FILE (outside the
workspace): its environment and cwd, the initialize / initialized params, every check/evaluate
params, the host's answers to its callbacks (including deliberate out-of-grant and
not-in-session reads) and any `$/cancelRequest`. In `wait` mode it never answers evaluate; in
`exit-after-initialize` mode it writes its initialize answer and exits before the grant arrives.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import anyio

from asp_protocol.canonical import changeset_digest, config_digest
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.framing import encode_message, stdio_byte_streams
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext

PROVIDER_ID = "probe"
NOT_IN_SESSION = "blob:sha256:" + "ab" * 32


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True)
    parser.add_argument("--protocol", default="asp/1.0")
    parser.add_argument(
        "--mode", default="clean", choices=("clean", "wait", "slow", "exit-after-initialize")
    )
    parser.add_argument("--inspect", action="store_true")
    args = parser.parse_args()
    anyio.run(_serve, args)
    return 0


async def _serve(args: argparse.Namespace) -> None:
    def record(kind: str, value: Any) -> None:
        with open(args.record, "a", encoding="utf-8") as out:
            out.write(json.dumps({"kind": kind, "value": value}) + "\n")

    record(
        "launch",
        {"env": dict(os.environ), "cwd": os.getcwd(), "argv": sys.argv, "pid": os.getpid()},
    )
    receive, send = stdio_byte_streams()
    endpoint = JsonRpcEndpoint(receive, send, name="probe")
    session: dict[str, Any] = {}

    async def initialize(params: Any, ctx: RequestContext) -> Any:
        record("initialize", params)
        if params.get("protocolVersion") != args.protocol:
            raise AspError(ErrorCode.UNSUPPORTED_VERSION, "unsupported-version")
        result = initialize_result()
        if args.mode == "exit-after-initialize":
            # no newline: the host sees this answer only at end of stream, with the pipe gone
            answer = encode_message({"jsonrpc": "2.0", "id": ctx.id, "result": result})
            os.write(1, answer.rstrip(b"\n"))
            os._exit(0)
        return result

    def initialize_result() -> dict[str, Any]:
        result = check_initialize_result()
        if args.inspect:
            result["capabilityFamilies"] = ["check", "inspect"]
            result["capabilities"]["inspect"] = {"verbs": ["symbols"]}
        return result

    def check_initialize_result() -> dict[str, Any]:
        return {
            "serverInfo": {"name": PROVIDER_ID, "version": "1.0.0", "fingerprint": "sha256:probe"},
            "capabilityFamilies": ["check"],
            "capabilities": {
                "check": {
                    "capabilityVersion": "check/1.0",
                    "diagnosticSources": [PROVIDER_ID],
                    "scopes": ["changeset"],
                    "comparisons": ["all", "introduced"],
                    "partialResults": False,
                    "incremental": False,
                    "unsupportedReporting": "assessment-status",
                }
            },
            "requestedPermissions": {"read": ["**/*"], "write": False, "network": True},
        }

    async def initialized(params: Any) -> None:
        record("initialized", params)
        session["baseline"] = params.get("baseline")

    async def baseline_changed(params: Any) -> None:
        record("baselineChanged", params)
        session["baseline"] = params.get("baseline")

    async def read(blobs: list[str]) -> Any:
        try:
            return await endpoint.request("workspace/readBlob", {"blobs": blobs}, timeout=10)
        except AspError as exc:
            return {"error": exc.code, "failClass": exc.fail_class}

    async def evaluate(params: Any, ctx: RequestContext) -> Any:
        record("evaluate", params)
        if args.mode == "wait":
            await ctx.cancel_requested.wait()
            record("cancel", {"id": ctx.id})
            raise AspError(ErrorCode.CANCELLED, "cancelled")
        if args.mode == "slow":
            await anyio.sleep(2)
        started = time.time()
        changes = params["changeset"]["changes"]
        wanted = sorted({c["after"] for c in changes if c.get("after")})
        answers = {blob: await read([blob]) for blob in wanted}
        served = [blob for blob, answer in answers.items() if "blobs" in answer]
        tree = await endpoint.request("workspace/listTree", {}, timeout=10)
        record(
            "callbacks",
            {
                "read": answers,
                "tree": [e["path"] for e in tree.get("entries", [])],
                "kinds": {e["path"]: e["kind"] for e in tree.get("entries", [])},
                "not_in_session": await read([NOT_IN_SESSION]),
            },
        )
        return {
            "status": "complete",
            "diagnostics": [],
            "coverage": {
                "requested": {
                    "scope": "changeset",
                    "diagnosticSources": [PROVIDER_ID],
                    "rules": [],
                    "comparison": params["comparison"],
                },
                "covered": {
                    "scope": "changeset",
                    "diagnosticSources": [PROVIDER_ID],
                    "rules": [],
                    "comparison": params["comparison"],
                },
                "degraded": [],
                "unsupported": [],
                "exhaustive": True,
                "truncated": False,
            },
            "validAsOf": {
                "baseline": session.get("baseline"),
                "changesetDigest": changeset_digest(params["changeset"]),
                "blobs": served,
            },
            "provider": {
                "id": PROVIDER_ID,
                "version": "1.0.0",
                "capabilityVersion": "check/1.0",
                "configDigest": config_digest(PROVIDER_ID, "check/1.0", {}),
            },
            "timing": {"elapsedMs": round((time.time() - started) * 1000)},
            "cache": {"status": "disabled"},
        }

    async def symbols(params: Any, ctx: RequestContext) -> Any:
        record("symbols", params)
        return {"nodes": [], "validAsOf": {"rev": session["baseline"]["rev"], "blobs": []}}

    endpoint.register("initialize", initialize)
    endpoint.register("sense/symbols", symbols)
    endpoint.register("check/evaluate", evaluate, cooperative_cancel=True)
    endpoint.on_notification("initialized", initialized)
    endpoint.on_notification("workspace/baselineChanged", baseline_changed)

    async def shutdown(params: Any, ctx: RequestContext) -> Any:
        return None

    async def exit_now(params: Any) -> None:
        os._exit(0)

    endpoint.register("shutdown", shutdown)
    endpoint.on_notification("exit", exit_now)
    await endpoint.serve()


if __name__ == "__main__":
    sys.exit(main())
