"""Inspect benchmark (issue 4 item 5) — a plain script, not a timed test.

    python bench/inspect_bench.py [--modules 2000] [--runs 30] [--skip-repo]

`sense/impact` and `sense/references` on this repository and on a generated package of
`--modules` modules, cold and warm, p50/p90 in milliseconds:

* engine: the analysis engine in-process. Cold = a fresh engine parsing and indexing every file,
  then answering; warm = the same query again on the cached index (an unchanged baseline).
* provider: the real `asp-python-inspect` process over pipes, with an in-bench host answering
  `workspace/listTree` / `workspace/readBlob` from memory. Cold = spawn, initialize, first query
  (every blob read through the callbacks); warm = the query repeated in the same session.

Target: warm p50 under 100 ms on the 2,000-module package.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from bench_support import stop_process

from asp_protocol.canonical import blob_id, digest
from asp_protocol.jsonrpc import JsonRpcEndpoint, RequestContext
from reference_host.providers.pyindex import ChangedFile, InspectEngine, impact, references

REPO = Path(__file__).resolve().parents[1]
WARM_TARGET_MS = 100.0
LIMITS = {"cpuPct": 50, "memoryMb": 512, "wallclockMs": 30000, "fd": 256}
PACKAGES = 20


def generated_module(package: int, index: int) -> str:
    """A module importing two siblings (one aliased) and, every tenth, the previous package."""
    lines = ['"""Generated module."""', "from __future__ import annotations", ""]
    for other in sorted({index - 1, index // 2} - {index}):
        if other >= 0:
            lines.append(
                f"from pkg_{package}.mod_{other} import func_{other}, Thing{other} as Base{other}"
            )
    if package and index % 10 == 0:
        lines.append(f"from pkg_{package - 1} import mod_{index} as upstream")
    lines += ["", "", f"class Thing{index}:"]
    lines += [
        f"    def method_{m}(self, value: int) -> int:" + f"\n        return value + {m}"
        for m in range(3)
    ]
    lines += ["", "", f"def func_{index}(value: int) -> int:", f"    thing = Thing{index}()"]
    calls = [f"func_{o}(value)" for o in sorted({index - 1, index // 2} - {index}) if o >= 0]
    if package and index % 10 == 0:
        calls.append(f"upstream.func_{index}(value)")
    lines.append(f"    return thing.method_0(value) + {' + '.join(calls) if calls else '0'}")
    return "\n".join(lines) + "\n"


def generated_package(modules: int) -> dict[str, bytes]:
    per = max(1, modules // PACKAGES)
    files: dict[str, bytes] = {}
    for package in range(PACKAGES):
        files[f"src/pkg_{package}/__init__.py"] = b""
        for index in range(per):
            files[f"src/pkg_{package}/mod_{index}.py"] = generated_module(package, index).encode()
        test = f"from pkg_{package}.mod_{per - 1} import func_{per - 1}\n\n\ndef test_top():\n    assert func_{per - 1}(1)\n"
        files[f"tests/test_pkg_{package}.py"] = test.encode()
    return files


def repository_files() -> dict[str, bytes]:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    out: dict[str, bytes] = {}
    for rel in listed.stdout.split():
        path = REPO / rel
        if rel.endswith(".py") and path.is_file():
            out[rel] = path.read_bytes()
    return out


# -- a host answering the callbacks from memory ----------------------------------------------------


class MemoryHost:
    """The host side of one provider session; blobs looked up by id in a dict."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.blobs = {blob_id(data): data for data in files.values()}
        self.baseline = {"rev": "tree:" + digest(sorted((p, blob_id(d)) for p, d in files.items()))}

    def add(self, data: bytes) -> str:
        self.blobs[blob_id(data)] = data
        return blob_id(data)

    async def list_tree(self, params: Any, ctx: RequestContext) -> dict[str, Any]:
        return {
            "entries": [
                {"path": p, "blobId": blob_id(d), "kind": "file"}
                for p, d in sorted(self.files.items())
            ]
        }

    async def read_blob(self, params: Any, ctx: RequestContext) -> dict[str, Any]:
        return {
            "blobs": [
                {"id": b, "encoding": "base64", "bytes": base64.b64encode(self.blobs[b]).decode()}
                for b in params["blobs"]
                if b in self.blobs
            ]
        }


async def provider_session(
    host: MemoryHost, queries: list[tuple[str, dict[str, Any]]], runs: int
) -> dict[str, tuple[float, list[float]]]:
    """Spawn the provider; per query, the cold time (spawn+initialize+first answer) and warm times."""
    out: dict[str, tuple[float, list[float]]] = {}
    for method, params in queries:
        started = time.perf_counter()
        process = await anyio.open_process(
            [sys.executable, "-m", "reference_host.providers.python_inspect"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None and process.stdin is not None
        endpoint = JsonRpcEndpoint(
            process.stdout, process.stdin, name="bench-host", max_line_bytes=256 * 2**20
        )
        endpoint.register("workspace/listTree", host.list_tree)
        endpoint.register("workspace/readBlob", host.read_blob)
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.serve)
            init = {
                "protocolVersion": "asp/1.0",
                "host": {"name": "inspect-bench", "version": "0"},
                "workspace": {"root": "/bench", "baseline": host.baseline},
            }
            await endpoint.request("initialize", init, timeout=60)
            grant = {"read": ["**"], "write": False, "network": False, "resourceLimits": LIMITS}
            await endpoint.notify(
                "initialized", {"grantedPermissions": grant, "baseline": host.baseline}
            )
            await endpoint.request(method, params, timeout=300)
            cold = (time.perf_counter() - started) * 1000
            warm = []
            for _ in range(runs):
                t0 = time.perf_counter()
                await endpoint.request(method, params, timeout=60)
                warm.append((time.perf_counter() - t0) * 1000)
            out[method] = (cold, warm)
            await stop_process(process, 5)
            tg.cancel_scope.cancel()
    return out


# -- measurements -----------------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def workload(
    name: str, files: dict[str, bytes], symbol: str, changed: str, runs: int
) -> list[list[str]]:
    after = files[changed] + b"\n\ndef bench_added() -> int:\n    return 1\n"
    change = {
        "path": changed,
        "kind": "modify",
        "before": blob_id(files[changed]),
        "after": blob_id(after),
    }

    def engine_query(engine: InspectEngine, verb: str) -> Callable[[], Any]:
        def run() -> Any:
            index = engine.index_sources(files)
            if verb == "references":
                return references(index, {"id": symbol}, "workspace", 1000)
            before = engine.facts(change["before"])
            return impact(
                index,
                [
                    ChangedFile(
                        changed,
                        "modify",
                        before=before,
                        after=engine.add_blob(change["after"], after),
                    )
                ],
                "workspace",
                None,
                1000,
            )

        return run

    rows: list[list[str]] = []
    host = MemoryHost(files)
    host.add(after)
    cs = {"baseline": host.baseline, "changes": [change]}
    queries = [
        ("sense/references", {"symbol": {"id": symbol}, "scope": "workspace"}),
        ("sense/impact", {"changeset": cs, "scope": "workspace"}),
    ]
    e2e = anyio.run(provider_session, host, queries, runs)
    for verb in ("references", "impact"):
        colds = [timed(engine_query(InspectEngine(), verb)) for _ in range(3)]
        engine = InspectEngine()
        run = engine_query(engine, verb)
        run()
        warm = [timed(run) for _ in range(runs)]
        result = run()
        size = (
            len(result[0].get("nodes", []))
            if verb == "references"
            else len(result[0]["impactedNodes"])
        )
        cold_e2e, warm_e2e = e2e[f"sense/{verb}"]
        rows.append(
            [
                name,
                f"sense/{verb}",
                str(len([p for p in files if p.endswith(".py")])),
                str(size),
                f"{statistics.median(colds):.0f}",
                f"{pct(warm, 0.5):.1f}",
                f"{pct(warm, 0.9):.1f}",
                f"{cold_e2e:.0f}",
                f"{pct(warm_e2e, 0.5):.1f}",
                f"{pct(warm_e2e, 0.9):.1f}",
            ]
        )
    return rows


def print_table(rows: list[list[str]]) -> None:
    header = [
        "workload",
        "query",
        "modules",
        "nodes",
        "engine cold p50",
        "engine warm p50",
        "warm p90",
        "provider cold",
        "provider warm p50",
        "warm p90",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        "\n(all times in ms; cold engine = median of 3 fresh engines; provider cold = spawn + initialize + first answer)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--skip-repo", action="store_true")
    args = parser.parse_args(argv)
    rows: list[list[str]] = []
    if not args.skip_repo:
        rows += workload(
            "this repository",
            repository_files(),
            "reference_host.providers.pyindex.index.def_id",
            "reference_host/providers/pyindex/facts.py",
            args.runs,
        )
    per = max(1, args.modules // PACKAGES)
    mid = per // 2
    rows += workload(
        f"generated {args.modules}",
        generated_package(args.modules),
        f"pkg_10.mod_{mid}.func_{mid}",
        f"src/pkg_10/mod_{mid}.py",
        args.runs,
    )
    print_table(rows)
    warm = [float(r[5]) for r in rows if r[0].startswith("generated")] + [
        float(r[8]) for r in rows if r[0].startswith("generated")
    ]
    verdict = "met" if max(warm) < WARM_TARGET_MS else "MISSED"
    print(
        f"target: warm p50 < {WARM_TARGET_MS:.0f} ms on the generated package — {verdict} (worst {max(warm):.1f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
