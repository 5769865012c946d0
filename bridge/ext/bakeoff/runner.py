"""Run the selected cases over both bindings (fresh processes per case and repeat) and report."""

from __future__ import annotations

import functools
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from bridge.ext.bakeoff.compare import CaseComparison, compare
from bridge.ext.bakeoff.mcp_runner import VARIANTS, run_mcp
from bridge.ext.bakeoff.native import run_native
from bridge.ext.bakeoff.plan import BindingRun
from bridge.ext.bakeoff.report import CaseResult, build_report, write
from bridge.ext.bakeoff.spec import Case
from bridge.ext.bakeoff.workspace import prepare, restore

log = logging.getLogger(__name__)


def _worst(comparisons: list[CaseComparison]) -> CaseComparison:
    """The comparison to report: the first repeat with a failure, else the first."""
    for comparison in comparisons:
        if comparison.failures or comparison.status == "failed":
            return comparison
    return comparisons[0]


def client_broke_on_cancel(case: Case, run: BindingRun) -> bool:
    """Whether *run* failed because the SDK's streamable-HTTP client broke on the cancel itself.

    When a request is cancelled while its SSE stream is still open, an event for it can arrive
    after the caller left; the client forwards it to the request's closed stream and the
    BrokenResourceError ends the client's own task (mcp/client/streamable_http.py,
    `_handle_sse_event`, which calls that path timing-dependent). That is the client library's
    loss, not the binding's, so such a run is carried once more and the report says so."""
    return (
        case.request.action == "cancel"
        and run.status == "failed"
        and run.variant.endswith("/http")
        and (run.reason or "").startswith("BrokenResourceError")
    )


async def run_case(
    case: Case, host: str, *, repeat: int, timeout: float, all_variants: bool = False
) -> CaseResult:
    """Prepare the case once, carry it natively and over MCP (2025-11-25 era, stdio) *repeat*
    times, then once over each other era/transport variant (see `mcp_runner.VARIANTS`)."""
    with tempfile.TemporaryDirectory(prefix=f"asp-bakeoff-{case.name}-") as tmp:
        # git and file work off the event loop: with --jobs > 1 other cases' pipes keep flowing.
        prepared = await anyio.to_thread.run_sync(
            functools.partial(prepare, case, Path(tmp), python=sys.executable)
        )
        runs: dict[str, list[BindingRun]] = {"native": [], "mcp-extension": []}
        applies = case.request.action == "apply"
        for _ in range(repeat):
            runs["native"].append(await run_native(prepared, host, timeout=timeout))
            if applies:  # the native apply wrote the work tree: start the next run afresh
                await anyio.to_thread.run_sync(restore, prepared)
            runs["mcp-extension"].append(await run_mcp(prepared, host, timeout=timeout))
        comparisons = [
            compare(case, native, mcp)
            for native, mcp in zip(runs["native"], runs["mcp-extension"], strict=True)
        ]
        # The other protocol era and transport, once each: what each loses, case by case.
        variants: dict[str, tuple[BindingRun, CaseComparison]] = {}
        for mode, transport in VARIANTS[1:] if all_variants else ():
            mcp = await run_mcp(prepared, host, timeout=timeout, mode=mode, transport=transport)
            if client_broke_on_cancel(case, mcp):
                first = mcp.reason
                mcp = await run_mcp(prepared, host, timeout=timeout, mode=mode, transport=transport)
                mcp.retried = f"the first run's SDK client broke on the cancel ({first})"
            variants[mcp.variant] = (mcp, compare(case, runs["native"][0], mcp))
    log.info("bake-off case %s: %s", case.name, comparisons[0].status)
    return CaseResult(case, _worst(comparisons), runs, variants)


async def run_bakeoff(
    cases: tuple[Case, ...],
    *,
    host: str,
    out_dir: Path,
    repeat: int = 1,
    timeout: float = 30.0,
    jobs: int = 1,
    all_variants: bool = False,
) -> tuple[dict[str, Any], Path, Path]:
    """Every case over both bindings; writes `bakeoff.json` and `bakeoff.md` into *out_dir*.

    `jobs > 1` runs that many cases at once (faster; latency figures then include contention).
    """
    started = time.time()
    slots: list[CaseResult | None] = [None] * len(cases)
    limiter = anyio.CapacityLimiter(max(1, jobs))

    async def one(index: int, case: Case) -> None:
        async with limiter:
            slots[index] = await run_case(
                case, host, repeat=repeat, timeout=timeout, all_variants=all_variants
            )

    async with anyio.create_task_group() as tg:
        for index, case in enumerate(cases):
            tg.start_soon(one, index, case)
    results = [r for r in slots if r is not None]
    report = build_report(results, host_command=host, repeat=repeat, started=started, jobs=jobs)
    json_path, md_path = write(out_dir, report, results)
    return report, json_path, md_path
