"""The decision algorithm (docs/architecture.md#the-decision) — the one place it lives.

- `deny` only for `blocking-diagnostic` (an authorized error-severity finding from required
  coverage; it is also a degraded entry and makes `exhaustive` false), `direct-write-risk` and
  `lattice-fast-path`.
- Every other degraded required coverage is `indeterminate`.
- Fail-open on health only at `interactive`: a health failure (timeout, crash, health-class RPC
  error) there adds a `fail-open` degradation beside the specific one, and the decision is still
  `indeterminate` — never `allow` (CORE-PROVIDER-FAIL-OPEN).
- Optional requirements' failures become `optional-degraded`: visible, never blocking.
- Every error finding from an authorized required provider is `gating` with a `nextStep`; all
  others are `advisory`, with a `severityNote` when the host capped an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asp_protocol.vocabulary import DENY_REASONS, CallSite, Decision
from reference_host.coverage import degradation
from reference_host.trust.policy import RequirementRole


@dataclass
class ProviderRun:
    """One provider's contribution to one requirement in one evaluation, as the host judged it."""

    provider_id: str
    requirement_id: str
    role: RequirementRole
    completed: bool = False
    authorized: bool = False
    health_failure: bool = False
    degraded: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    unnamespaced: set[int] = field(default_factory=set)
    authority: dict[str, Any] | None = None  # authorityEvidence, only once initialized
    provenance: dict[str, Any] | None = None
    blobs: list[str] = field(default_factory=list)
    covered: set[str] | None = field(default_factory=set)  # path prefixes; None: every path
    assessed: bool = False  # a valid Assessment said what it covered (complete or partial)


@dataclass
class Outcome:
    decision: Decision
    coverage: dict[str, Any]
    findings: list[dict[str, Any]]
    authority_evidence: list[dict[str, Any]]
    provenance: list[dict[str, Any]]
    provider_ids: list[str]
    blobs: list[str]


def _next_step(diagnostic: dict[str, Any]) -> tuple[str, str]:
    fix = diagnostic.get("fix")
    if isinstance(diagnostic.get("help"), str) and diagnostic["help"].strip():
        return diagnostic["help"][:1000], "server"
    href = (diagnostic.get("codeDescription") or {}).get("href")
    if isinstance(href, str) and href:
        return f"See {href[:500]}", "server"
    ref = (fix.get("editRef") or fix.get("actRef")) if isinstance(fix, dict) else None
    if isinstance(ref, str) and ref:
        return f"Apply fix {ref[:200]} through the host.", "server"
    location = diagnostic.get("location", {})
    line = ((location.get("range") or {}).get("start") or {}).get("line")
    where = location.get("path", "?") + (f":{line + 1}" if isinstance(line, int) else "")
    return (
        f"Blocked by {diagnostic.get('source')} ({diagnostic.get('code')}); no remediation provided. Review {where}.",
        "synthesized",
    )


def _findings(run: ProviderRun, gating_allowed: bool) -> tuple[list[dict[str, Any]], int]:
    findings = []
    gating = 0
    for index, diagnostic in enumerate(run.diagnostics):
        assert run.authority is not None
        finding: dict[str, Any] = {"diagnostic": diagnostic, "authority": run.authority}
        is_error = diagnostic.get("severity") == "error"
        if is_error and gating_allowed and index not in run.unnamespaced:
            step, origin = _next_step(diagnostic)
            finding.update(disposition="gating", nextStep=step, nextStepOrigin=origin)
            gating += 1
        else:
            finding["disposition"] = "advisory"
            if is_error:
                finding["severityNote"] = _cap_note(run, index)
        findings.append(finding)
    return findings, gating


def _cap_note(run: ProviderRun, index: int) -> str:
    if index in run.unnamespaced:
        return "author marked error; code is not under a declared diagnostic source, shown advisory"
    if run.role == "optional":
        return "author marked error; source serves an optional requirement, shown advisory"
    if not run.authorized:
        return "author marked error; source lacks an authority grant, shown advisory"
    return "author marked error; the assessment did not count toward the gate, shown advisory"


def decide(
    call_site: CallSite,
    required: list[str],
    runs: list[ProviderRun],
    host_degraded: list[dict[str, Any]],
) -> Outcome:
    """Aggregate provider runs and host-level degradations into the final decision."""
    degraded: list[dict[str, Any]] = list(host_degraded)
    findings: list[dict[str, Any]] = []
    ran: list[str] = []
    by_requirement: dict[str, list[ProviderRun]] = {}
    for run in runs:
        by_requirement.setdefault(run.requirement_id, []).append(run)
    for requirement_id, group in by_requirement.items():
        if group and all(run.completed for run in group) and requirement_id not in ran:
            ran.append(requirement_id)
        for run in group:
            if run.role == "optional":
                for entry in run.degraded:
                    degraded.append(
                        {
                            **entry,
                            "reason": "optional-degraded",
                            "detail": f"{entry['reason']}: {entry['detail']}"[:1000],
                        }
                    )
                if (run.completed or run.assessed) and run.authority is not None:
                    findings.extend(_findings(run, gating_allowed=False)[0])
                continue
            degraded.extend(run.degraded)
            if run.health_failure and call_site == "interactive":
                degraded.append(
                    degradation(
                        run.provider_id,
                        "fail-open",
                        "interactive health failure is reported, not allowed",
                        requirement=requirement_id,
                        capability="check",
                    )
                )
            if (run.completed or run.assessed) and run.authority is not None:
                # only a complete, undegraded, authorized Assessment gates; a partial one's
                # findings are shown advisory (the decision is already not allow)
                gating_allowed = run.completed and run.authorized and not run.degraded
                run_findings, gating = _findings(run, gating_allowed)
                findings.extend(run_findings)
                if gating:
                    degraded.append(
                        degradation(
                            run.provider_id,
                            "blocking-diagnostic",
                            f"{gating} gating error finding(s) from the required provider",
                            requirement=requirement_id,
                            capability="check",
                        )
                    )
    covered = {run.requirement_id for run in runs if run.role == "required"}
    for requirement_id in required:
        if requirement_id not in covered and not any(
            d.get("requirement") == requirement_id for d in degraded
        ):
            degraded.append(
                degradation(
                    requirement_id,
                    "missing-required-provider",
                    "no provider serves this requirement",
                    requirement=requirement_id,
                    capability="check",
                )
            )
    decision: Decision = "allow"
    blocking = [d for d in degraded if d["reason"] != "optional-degraded"]
    if any(d["reason"] in DENY_REASONS for d in blocking):
        decision = "deny"
    elif blocking:
        decision = "indeterminate"
    contributing = [run for run in runs if run.authority is not None]
    provider_ids: list[str] = []
    for run in contributing:
        for name in (run.provider_id, run.requirement_id):
            if name not in provider_ids:
                provider_ids.append(name)
    provenance = []
    for run in contributing:
        if run.provenance is not None and run.provenance not in provenance:
            provenance.append(run.provenance)
    blobs = sorted({blob for run in runs if run.completed for blob in run.blobs})
    coverage = {
        "exhaustive": not degraded,
        "required": list(required),
        "enrolled": list(required),
        "ran": ran,
        "degraded": degraded,
    }
    return Outcome(
        decision,
        coverage,
        findings,
        [run.authority for run in contributing if run.authority is not None],
        provenance,
        provider_ids,
        blobs,
    )
