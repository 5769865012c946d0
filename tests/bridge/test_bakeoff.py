"""The bake-off on the reference host (every ADR 0025 case, both bindings), and its judging rules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge.ext.bakeoff import cases, runner
from bridge.ext.bakeoff.compare import CaseComparison, compare
from bridge.ext.bakeoff.mcp_runner import variant_name
from bridge.ext.bakeoff.plan import DEFAULT_HOST, BindingRun, Step
from bridge.ext.bakeoff.report import CaseResult, build_report, render_markdown
from bridge.ext.bakeoff.runner import run_bakeoff
from bridge.ext.bakeoff.spec import MUST_HOLD, PROPERTIES, RESULT_PROPERTIES
from tests.support.definitions import assert_valid

ADR_0025_CASES = {
    "allow",
    "deny",
    "stale-baseline",
    "malformed-provider-output",
    "cancellation",
    "unsupported-capability",
    "missing-provider",
    "missing-authority",
    "timeout",
    "insufficient-assurance",
    "fast-path-bypass",
    "edit-plan-request",
    "denied-apply",
    "applied-proposal",
}


@pytest.mark.needs_definitions
@pytest.mark.slow
@pytest.mark.anyio
async def test_bakeoff_on_the_reference_host(tmp_path: Path) -> None:
    report, json_path, md_path = await run_bakeoff(
        cases.all_cases(), host=DEFAULT_HOST, out_dir=tmp_path, repeat=1, jobs=2
    )
    data = json.loads(json_path.read_text())
    assert data == json.loads(json.dumps(report))
    assert data["verdict"] == "pass", data["failures"]
    assert {c["case"] for c in data["cases"]} == ADR_0025_CASES

    # One record per case and binding.
    assert len(data["records"]) == 2 * len(ADR_0025_CASES)
    assert {(r["case"], r["binding"]) for r in data["records"]} == {
        (c, b) for c in ADR_0025_CASES for b in ("native", "mcp-extension")
    }

    by_case = {c["case"]: c for c in data["cases"]}
    for _name, case in by_case.items():
        assert case["status"] == "compared", case  # none not-run on the reference host
        assert case["scenario"]["met"], (_name, case["scenario"])
        assert not case["failures"]
        assert case["properties"]["gate-unsatisfiable"]["verdict"] == "held"

    evaluate = by_case["deny"]["properties"]
    for prop in RESULT_PROPERTIES:
        assert evaluate[prop]["verdict"] == "held", prop
    assert evaluate["decision"]["native"] == evaluate["decision"]["mcp"] == "deny"
    assert evaluate["call-site"]["mcp"] == "gate"
    cancellation = by_case["cancellation"]["properties"]["cancellation"]
    assert cancellation["native"]["hostReply"]["code"] == -32016
    assert cancellation["mcp"]["hostReply"] == {"kind": "error", "code": -32016}
    assert cancellation["verdict"] == "held"
    assert by_case["fast-path-bypass"]["properties"]["fast-path-blocked"]["verdict"] == "held"
    for name in ("denied-apply", "applied-proposal"):
        assert by_case[name]["properties"]["apply-refused"]["verdict"] == "held"
        assert by_case[name]["properties"]["mediated-apply"]["verdict"] == "failed"  # by design
    native = {r["case"]: r["run"] for r in data["records"] if r["binding"] == "native"}
    applied = native["applied-proposal"]["steps"][-1]["result"]
    assert applied["applied"] is True and applied["decision"]["decision"] == "allow"
    denied = native["denied-apply"]["steps"][-1]["result"]
    assert denied["applied"] is False and denied["refusal"]["reason"] == "validation-denied"
    plan_result = native["edit-plan-request"]["steps"][-1]["result"]
    assert plan_result["proposal"]["status"] == "complete"
    assert_valid(plan_result, "outer-host.schema.json#/$defs/requestEditPlanResult")

    # The host's answers in the records are the real, schema-valid results.
    for record in data["records"]:
        run = record["run"]
        wrote = record["case"] == "applied-proposal" and record["binding"] == "native"
        assert run is not None and run["workspaceUnchanged"] is not wrote
        case = by_case[record["case"]]
        if case["status"] == "compared" and record["method"] == "host/evaluateChangeset":
            final = run["steps"][-1]
            if final["kind"] == "result":
                assert_valid(
                    final["result"], "outer-host.schema.json#/$defs/evaluateChangesetResult"
                )
                assert final["result"]["callSite"] == "gate"
            if record["binding"] == "mcp-extension" and final["envelope"]:
                assert final["envelope"]["authority"]["gateSatisfied"] is False

    for name in PROPERTIES:
        assert name in data["properties"], name
        verdict = data["properties"][name]["verdict"]
        if name == "mediated-apply":
            assert verdict == "not preserved (by design)"
        else:
            assert verdict == "preserved", (name, data["properties"][name])
    for binding in ("native", "mcp-extension"):
        assert data["bindings"][binding]["samples"] >= 8
        assert data["bindings"][binding]["p50Ms"] > 0
        assert data["bindings"][binding]["warmP50Ms"] > 0

    markdown = md_path.read_text()
    assert "**Verdict: PASS**" in markdown
    for case in cases.all_cases():
        assert f"| {case.title} |" in markdown
    assert "| gate-unsatisfiable | yes | preserved |" in markdown
    adr = {row["property"]: row for row in data["adrProperties"]}
    assert len(adr) == 8
    assert adr["host-driven required invocation"]["verdict"] == "cannot be proven over MCP"
    assert adr["mediated apply without ordinary-tool ambiguity"]["verdict"] == (
        "not over MCP (by design)"
    )
    for name in ("call-site preservation", "freshness equality", "required coverage"):
        assert adr[name]["verdict"] == "preserved", adr[name]
    assert "| ADR 0025 property | Verdict | Evidence |" in markdown


@pytest.mark.slow
@pytest.mark.anyio
async def test_bakeoff_variants_record_what_each_era_and_transport_loses(tmp_path: Path) -> None:
    selected = cases.select(["allow", "cancellation", "applied-proposal"])
    report, _, md_path = await run_bakeoff(
        selected, host=DEFAULT_HOST, out_dir=tmp_path, repeat=1, jobs=3, all_variants=True
    )
    assert report["verdict"] == "pass", report["failures"]
    variants = {row["variant"]: row for row in report["variants"]}
    assert set(variants) == {"2026-07-28/stdio", "2025-11-25/http", "2026-07-28/http"}
    for row in variants.values():
        assert row["compared"] == 3, row
        assert row["extensionAdvertisedIn"], row
        assert row["cancellation"] is not None
    records = {(r["case"], r["binding"]) for r in report["records"]}
    assert ("applied-proposal", "mcp-extension@2026-07-28/http") in records
    assert "| MCP era/transport |" in md_path.read_text()


def _result(decision: str, call_site: str = "gate", digest: str = "sha256:aa") -> dict[str, Any]:
    return {
        "decision": decision,
        "callSite": call_site,
        "requestDigest": digest,
        "policyDigest": "sha256:pp",
        "validAsOf": {"rev": "git:tree:1"},
        "coverage": {"required": ["r"], "ran": ["p"], "degraded": []},
        "authorityEvidence": [],
        "assurance": {"mode": "advisory", "transactionGuarantee": "none"},
        "receipt": {"kind": "evaluate", "baseline": {"rev": "git:tree:1"}},
    }


def _envelope(result: dict[str, Any], gate_satisfied: bool = False) -> dict[str, Any]:
    return {
        "nonAuthoritative": True,
        "authority": {"authoritative": False, "gateSatisfied": gate_satisfied},
        "callSite": result["callSite"],
        "hostResult": result,
    }


def _runs(native: dict[str, Any], mcp: dict[str, Any], **kw: Any) -> tuple[BindingRun, BindingRun]:
    method = "host/evaluateChangeset"
    return (
        BindingRun("native", steps=[Step(method, "result", 1.0, result=native)]),
        BindingRun(
            "mcp-extension",
            steps=[Step("asp/" + method, "result", 2.0, result=mcp, envelope=_envelope(mcp, **kw))],
        ),
    )


@pytest.mark.anyio
async def test_only_a_run_whose_sdk_client_broke_on_the_cancel_is_carried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK's streamable-HTTP client can break on a cancelled request (a late SSE event sent to
    the request's closed stream); that run is carried once more and says so. A fake stands for the
    client's failure, which no test can time."""
    (case,) = cases.select(["cancellation"])
    calls: list[tuple[str, str]] = []

    async def fake_mcp(
        prepared: Any, host: str, *, timeout: float, mode: str = "legacy", transport: str = "stdio"
    ) -> BindingRun:
        calls.append((mode, transport))
        run = BindingRun("mcp-extension", variant=variant_name(mode, transport))
        if calls.count((mode, transport)) == 1 and transport == "streamable-http":
            broken = mode == "auto"  # the other HTTP variant fails for another reason: kept
            run.status = "failed"
            run.reason = "BrokenResourceError: " if broken else "RuntimeError: bridge died"
        return run

    async def fake_native(prepared: Any, host: str, *, timeout: float) -> BindingRun:
        return BindingRun("native")

    monkeypatch.setattr(runner, "prepare", lambda case, path, python: object())
    monkeypatch.setattr(runner, "run_mcp", fake_mcp)
    monkeypatch.setattr(runner, "run_native", fake_native)

    def fake_compare(case: Any, native: BindingRun, mcp: BindingRun) -> CaseComparison:
        return CaseComparison(case.name, "compared" if mcp.status == "ran" else "failed")

    monkeypatch.setattr(runner, "compare", fake_compare)
    result = await runner.run_case(case, "host", repeat=1, timeout=5, all_variants=True)
    modern_http, _ = result.variants["2026-07-28/http"]
    assert modern_http.status == "ran" and "BrokenResourceError" in (modern_http.retried or "")
    legacy_http, _ = result.variants["2025-11-25/http"]
    assert legacy_http.status == "failed" and legacy_http.retried is None
    assert calls.count(("auto", "streamable-http")) == 2
    assert calls.count(("legacy", "streamable-http")) == 1


def test_a_binding_difference_fails_the_property_and_the_verdict() -> None:
    case = cases.select(["deny"])[0]
    native, mcp = _runs(_result("deny"), _result("allow", call_site="interactive", digest="x"))
    comparison = compare(case, native, mcp)
    assert set(comparison.failures) == {"decision", "call-site", "request-identity"}
    assert comparison.properties["coverage"].verdict == "held"
    report = build_report(
        [CaseResult(case, comparison, {"native": [native], "mcp-extension": [mcp]})],
        host_command="h",
        repeat=1,
        started=0.0,
    )
    assert report["verdict"] == "fail"
    assert {f["property"] for f in report["failures"]} == {
        "decision",
        "call-site",
        "request-identity",
    }
    assert report["properties"]["decision"]["verdict"] == "not preserved"


def test_a_gate_satisfying_mcp_answer_fails() -> None:
    case = cases.select(["allow"])[0]
    native, mcp = _runs(_result("allow"), _result("allow"), gate_satisfied=True)
    comparison = compare(case, native, mcp)
    assert comparison.failures == ["gate-unsatisfiable"]
    assert "gate-unsatisfiable" in MUST_HOLD


def test_a_case_the_host_cannot_serve_is_not_run_never_passed() -> None:
    case = cases.select(["applied-proposal"])[0]
    native = BindingRun("native", "not-run", "host reports the edit profile unavailable")
    refusal = Step(
        "asp/host/applyProposal",
        "refused",
        1.0,
        error={"code": -32012, "reason": "refused"},
        envelope=_envelope(_result("allow")),
    )
    mcp = BindingRun("mcp-extension", steps=[refusal])
    comparison = compare(case, native, mcp)
    assert comparison.status == "not-run"
    assert comparison.reason == "host reports the edit profile unavailable"
    assert comparison.properties["mediated-apply"].verdict == "not-run"
    assert comparison.properties["apply-refused"].verdict == "held"
    results = [CaseResult(case, comparison, {"native": [native], "mcp-extension": [mcp]})]
    report = build_report(results, host_command="h", repeat=1, started=0.0)
    assert report["counts"] == {"cases": 1, "compared": 0, "notRun": 1, "failed": 0}
    assert report["properties"]["mediated-apply"]["verdict"] == "not run"
    assert "not run: host reports the edit profile unavailable" in render_markdown(report, results)

    forwarded = BindingRun("mcp-extension", steps=[Step("asp/host/applyProposal", "result", 1.0)])
    assert compare(case, native, forwarded).failures == ["apply-refused"]


def test_the_default_host_is_this_installations_reference_host() -> None:
    assert DEFAULT_HOST.split()[0].endswith(Path(sys.executable).name)
    assert DEFAULT_HOST.endswith("-m reference_host")


class _StderrOnly:
    """A stand-in host process: only its stderr is read (one huge line without a newline)."""

    def __init__(self, chunks: int, size: int = 65536) -> None:
        self.stdout = self.stdin = object()
        self._left = chunks
        self._size = size
        self.stderr = self

    def __aiter__(self) -> _StderrOnly:
        return self

    async def __anext__(self) -> bytes:
        if self._left == 0:
            raise StopAsyncIteration
        self._left -= 1
        return b"x" * self._size


@pytest.mark.anyio
async def test_native_stderr_drain_is_bounded_without_newlines() -> None:
    """A host that writes megabytes of stderr without a newline cannot grow the drain's buffer."""
    import tracemalloc

    from bridge.ext.bakeoff.native import _NativeHost

    host = _NativeHost(_StderrOnly(chunks=256))  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        await host.drain_stderr()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024, peak  # 16 MiB went by
