"""Extract the compared fields from each binding's answer and judge every property per case.

Fields come from the host's result (native) or the envelope's verbatim `hostResult` (MCP), so a
difference can only be introduced by the binding. Volatile fields (receipt ids, timestamps,
elapsed time, free-text details) are not compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from asp_protocol.canonical import canonical_json
from asp_protocol.wire import wire_fields
from bridge.ext.bakeoff.plan import BindingRun, Step
from bridge.ext.bakeoff.spec import MUST_HOLD, Case

Verdict = Literal["held", "failed", "not-run", "n/a"]
METHOD_NOT_FOUND = -32601


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sorted_strings(value: Any) -> list[str]:
    return sorted(v for v in value if isinstance(v, str)) if isinstance(value, list) else []


def _canonical_list(value: Any) -> list[Any]:
    items = value if isinstance(value, list) else []
    return sorted(items, key=canonical_json)


def extract(step: Step | None) -> dict[str, Any]:
    """The compared fields of one answer (the last step a binding carried)."""
    if step is None:
        return {"kind": None}
    result = _dict(step.result)
    receipt = _dict(result.get("receipt"))
    coverage = _dict(result.get("coverage")) or _dict(receipt.get("coverage"))
    assurance = _dict(result.get("assurance")) or _dict(receipt.get("assurance"))
    baseline = {k: v for k, v in _dict(receipt.get("baseline")).items() if k != "stampedAt"}
    degraded = [
        {k: d.get(k) for k in ("source", "reason", "requirement")}
        for d in coverage.get("degraded", [])
        if isinstance(d, dict)
    ]
    authority = _dict(_dict(step.envelope).get("authority"))
    error = step.error or {}
    return {
        "kind": step.kind,
        "decision": result.get("decision"),
        "callSite": result.get("callSite", receipt.get("callSite")),
        "labelCallSite": _dict(step.envelope).get("callSite") if step.envelope else None,
        "requestDigest": result.get("requestDigest", receipt.get("requestDigest")),
        "changesetDigest": result.get("changesetDigest", receipt.get("changesetDigest")),
        "policyDigest": result.get("policyDigest", receipt.get("policyDigest")),
        "validAsOf": result.get("validAsOf", receipt.get("validAsOf")),
        "baseline": baseline or None,
        "coverage": {
            "required": _sorted_strings(coverage.get("required")),
            "ran": _sorted_strings(coverage.get("ran")),
            "degraded": sorted(degraded, key=canonical_json),
        },
        "authorityEvidence": _canonical_list(
            result.get("authorityEvidence", receipt.get("authorityEvidence"))
        ),
        "assurance": {
            "mode": assurance.get("mode"),
            "transactionGuarantee": assurance.get("transactionGuarantee"),
        },
        "receiptKind": receipt.get("kind"),
        "applied": result.get("applied"),
        "error": {
            "code": error.get("code"),
            "failClass": error.get("failClass"),
            "reason": error.get("reason"),
        }
        if step.error
        else None,
        "cancellation": step.cancellation,
        "gateSatisfied": authority.get("gateSatisfied") if step.envelope else None,
        "authoritative": authority.get("authoritative") if step.envelope else None,
    }


@dataclass
class PropertyJudgement:
    verdict: Verdict
    native: Any = None
    mcp: Any = None
    note: str = ""
    must_hold: bool = True

    def to_json(self) -> dict[str, Any]:
        return wire_fields(self, "verdict", "must_hold", "native", "mcp", "note")


@dataclass
class CaseComparison:
    case: str
    status: Literal["compared", "not-run", "failed"]
    reason: str | None = None
    properties: dict[str, PropertyJudgement] = field(default_factory=dict)
    scenario: dict[str, Any] = field(default_factory=dict)

    @property
    def failures(self) -> list[str]:
        return [
            name for name, j in self.properties.items() if j.verdict == "failed" and j.must_hold
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            **wire_fields(self, "case", "status", "reason", "scenario"),
            "properties": {name: j.to_json() for name, j in self.properties.items()},
            "failures": self.failures,
        }


def _equal(name: str, native: Any, mcp: Any) -> PropertyJudgement:
    if native is None and mcp is None:
        return PropertyJudgement("n/a", note=f"neither answer carries {name}")
    verdict: Verdict = "held" if canonical_json(native) == canonical_json(mcp) else "failed"
    return PropertyJudgement(verdict, native, mcp)


def _gate_unsatisfiable(mcp_run: BindingRun) -> PropertyJudgement:
    """Every labelled MCP answer says authoritative:false and gateSatisfied:false."""
    seen = []
    for step in [*mcp_run.setup, *mcp_run.steps, *([mcp_run.warm] if mcp_run.warm else [])]:
        if step.envelope is None:
            continue
        authority = _dict(step.envelope.get("authority"))
        seen.append(
            {
                "method": step.method,
                "gateSatisfied": authority.get("gateSatisfied"),
                "authoritative": authority.get("authoritative"),
            }
        )
    if not seen:
        return PropertyJudgement("held", mcp=[], note="no MCP answer carried a result to label")
    ok = all(s["gateSatisfied"] is False and s["authoritative"] is False for s in seen)
    return PropertyJudgement("held" if ok else "failed", mcp=seen)


def _apply_refused(mcp_run: BindingRun) -> PropertyJudgement:
    """`asp/host/applyProposal` over MCP is refused, never forwarded, and nothing is written."""
    applies = [s for s in mcp_run.steps if s.method.endswith("applyProposal")]
    if not applies:
        return PropertyJudgement("not-run", note="the MCP run sent no apply")
    refused = all(s.kind == "refused" for s in applies) and mcp_run.workspace_unchanged
    summary = [{"kind": s.kind, "error": s.error} for s in applies]
    return PropertyJudgement(
        "held" if refused else "failed",
        mcp=summary,
        note="workspace unchanged" if mcp_run.workspace_unchanged else "the workspace changed",
    )


def _blocked(step: Step | None, *, mcp: bool) -> tuple[bool, Any]:
    if step is None:
        return False, None
    if step.kind == "result":
        decision = _dict(step.result).get("decision")
        return decision not in ("allow", None), {"decision": decision}
    code = (step.error or {}).get("code")
    if mcp:
        return step.kind in ("refused", "not-offered") or code == METHOD_NOT_FOUND, {
            "kind": step.kind,
            "code": code,
        }
    return step.kind == "error", {"kind": step.kind, "code": code}


def _scenario(case: Case, native: BindingRun) -> dict[str, Any]:
    """Whether the native host answered what the case is meant to exercise."""
    fields = extract(native.final)
    expect = case.expect
    observed: dict[str, Any] = {
        "decision": fields.get("decision"),
        "degraded": sorted({d["reason"] for d in fields["coverage"]["degraded"]})
        if fields.get("coverage")
        else [],
    }
    met = True
    if expect.decision is not None:
        met = met and observed["decision"] == expect.decision
    if expect.degraded:
        met = met and set(expect.degraded) <= set(observed["degraded"])
    if expect.error_code is not None:
        cancellation = _dict(fields.get("cancellation"))
        reply = _dict(cancellation.get("hostReply"))
        observed["hostReply"] = reply
        met = met and reply.get("code") == expect.error_code
    return {
        "expected": {
            "decision": expect.decision,
            "degraded": list(expect.degraded),
            "errorCode": expect.error_code,
        },
        "observed": observed,
        "met": met,
    }


def compare(case: Case, native: BindingRun, mcp: BindingRun) -> CaseComparison:
    """Judge each of the case's properties on the two runs."""
    if native.status == "failed" or mcp.status == "failed":
        which = "native" if native.status == "failed" else "mcp-extension"
        reason = native.reason if which == "native" else mcp.reason
        comparison = CaseComparison(case.name, "failed", f"{which} run failed: {reason}")
        comparison.properties["binding-ran"] = PropertyJudgement(
            "failed", note=comparison.reason or ""
        )
        return comparison
    if native.status == "not-run":
        comparison = CaseComparison(case.name, "not-run", native.reason)
        for name in case.properties:
            comparison.properties[name] = PropertyJudgement(
                "not-run", note="the host cannot serve this case", must_hold=name in MUST_HOLD
            )
        # What MCP alone can still show is judged, so a broken refusal is never hidden.
        comparison.properties["gate-unsatisfiable"] = _gate_unsatisfiable(mcp)
        if any(s.method.endswith("applyProposal") for s in mcp.steps):
            comparison.properties["apply-refused"] = _apply_refused(mcp)
        return comparison
    n, m = extract(native.final), extract(mcp.final)
    comparison = CaseComparison(case.name, "compared", scenario=_scenario(case, native))
    for name in case.properties:
        comparison.properties[name] = _judge(name, case, n, m, native, mcp)
        comparison.properties[name].must_hold = name in MUST_HOLD
    return comparison


def _judge(
    name: str, case: Case, n: dict[str, Any], m: dict[str, Any], native: BindingRun, mcp: BindingRun
) -> PropertyJudgement:
    if name == "decision":
        if n["kind"] == "result" or m["kind"] == "result":
            return _equal(name, n["decision"], m["decision"])
        return _equal(name, n["error"], m["error"])
    if name == "call-site":
        requested = case.request.call_site
        judgement = _equal(name, n["callSite"], m["callSite"])
        if judgement.verdict == "held" and n["callSite"] != requested:
            judgement = PropertyJudgement(
                "failed",
                n["callSite"],
                m["callSite"],
                f"host answered a call-site other than {requested}",
            )
        if m["labelCallSite"] not in (None, requested):
            judgement = PropertyJudgement(
                "failed", n["callSite"], m["labelCallSite"], "the MCP label names another call-site"
            )
        return judgement
    if name == "request-identity":
        keys = ("requestDigest", "changesetDigest", "policyDigest")
        return _equal(name, {k: n[k] for k in keys}, {k: m[k] for k in keys})
    if name == "freshness":
        return _equal(
            name,
            {"validAsOf": n["validAsOf"], "baseline": n["baseline"]},
            {"validAsOf": m["validAsOf"], "baseline": m["baseline"]},
        )
    if name == "coverage":
        return _equal(name, n["coverage"], m["coverage"])
    if name == "authority":
        return _equal(name, n["authorityEvidence"], m["authorityEvidence"])
    if name == "assurance":
        return _equal(name, n["assurance"], m["assurance"])
    if name == "receipt-kind":
        return _equal(name, n["receiptKind"], m["receiptKind"])
    if name == "cancellation":
        # The host's terminal answer to `$/cancelRequest`: its kind and, for errors, its code.
        nc, mc = _dict(n["cancellation"]), _dict(m["cancellation"])
        n_reply, m_reply = _dict(nc.get("hostReply")), _dict(mc.get("hostReply"))
        judgement = _equal(
            name,
            {"kind": n_reply.get("kind"), "code": n_reply.get("code")},
            {"kind": m_reply.get("kind"), "code": m_reply.get("code")},
        )
        if not (nc.get("sent") and mc.get("sent")):
            judgement = PropertyJudgement("failed", nc, mc, "a binding did not deliver the cancel")
        else:
            judgement.native, judgement.mcp = nc, mc
        return judgement
    if name == "fast-path-blocked":
        nb, nv = _blocked(native.final, mcp=False)
        mb, mv = _blocked(mcp.final, mcp=True)
        return PropertyJudgement(
            "held" if nb and mb else "failed",
            nv,
            mv,
            "no binding let a provider method bypass the host",
        )
    if name == "gate-unsatisfiable":
        return _gate_unsatisfiable(mcp)
    if name == "mediated-apply":
        native_apply = n.get("applied"), n.get("receiptKind")
        return PropertyJudgement(
            "failed",
            {"applied": native_apply[0], "receiptKind": native_apply[1]},
            {"kind": m["kind"]},
            "by design: the extension refuses apply, so apply is not mediated",
        )
    if name == "apply-refused":
        return _apply_refused(mcp)
    return PropertyJudgement("n/a", note=f"unknown property {name}")
