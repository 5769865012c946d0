"""`asp-fake-provider --protocol asp/0.1`: the fake provider speaking the 0.1 dialect as recorded
from a real third-party provider in the field (`../shared/asp/field/`), so CI covers the host's
0.1 compatibility profile without that provider's runtime.

What it sends, as recorded: a check capability block without `capabilityVersion`,
`partialResults`, `incremental` or `unsupportedReporting`, with extra `rules`/`manifest` keys and a
`paths` scope; checks selected only by a top-level `checks` parameter (unknown ids are -32603,
an empty list is -32603, no selection runs every check, and the one check that is not file-scoped
makes the whole answer `unsupported`); a selected language check with no files of its language
makes the answer `incomplete`; `timing` as `{durationMs, phases, processState}`; 1-based
`{line, column}` positions; an evidence entry of a kind outside v1; a `configDigest` that is a
constant of the build and its check list. It ignores `workspace/baselineChanged` (it keeps listing
the tree of the baseline it was initialized with), answers `shutdown` with -32601 and has no
`exit` handling: it ends when its stdin closes. Scripted misbehaviours of `fake.py` apply on top.
"""

from __future__ import annotations

import itertools
from typing import Any

from asp_protocol import ASP_LEGACY_PROTOCOL_VERSION
from asp_protocol.canonical import digest
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.jsonrpc import RequestContext
from reference_host.providers.assessment import parse_evaluate
from reference_host.providers.fake import FakeProvider
from reference_host.providers.runtime import Call

LINES = "fake.lines"  # applies to every file; `--behavior finding` reports on it
PYTHON = "python.syntax"  # applies to `.py` files only
REPO = "repo.layout"  # not file-scoped: a request running it is unsupported
CHECKS = (LINES, PYTHON, REPO)
FILE_SCOPES = ["files", "changed", "staged", "tree", "all", "repo", "package"]
SCOPES = {LINES: FILE_SCOPES, PYTHON: FILE_SCOPES, REPO: ["all", "repo", "package"]}
OUTSIDE_V1_KIND = "log"


def _internal(detail: str) -> AspError:
    return AspError(ErrorCode.INTERNAL_ERROR, "internal-error", fail_class="health", detail=detail)


class LegacyFakeProvider(FakeProvider):
    """FakeProvider with the recorded 0.1 wire shapes."""

    def __init__(self, behavior: str, **kwargs: Any) -> None:
        super().__init__(behavior, protocol_version=ASP_LEGACY_PROTOCOL_VERSION, **kwargs)
        if "check" in self.capabilities:
            self.capabilities = {"check": self._capability()}
        self._digests = itertools.count()

    def _capability(self) -> dict[str, Any]:
        return {
            "diagnosticSources": [self.provider_id],
            "rules": list(CHECKS),
            "manifest": [
                {
                    "checkId": check,
                    "owner": "validation",
                    "adapter": check.split(".")[0],
                    "defaultSeverity": "error",
                    "supportedScopes": SCOPES[check],
                    "requiresGraph": False,
                }
                for check in CHECKS
            ],
            "scopes": ["changeset", "paths"],
            "comparisons": ["all"],
            "fixes": False,
            "projectContext": {"schemaId": "fake.project-context.v1", "readOnly": True},
        }

    @property
    def config_digest(self) -> str:
        """A constant of the build and its check list, following no shared algorithm."""
        if self.behavior == "wrong-config-digest":  # 0.1 variant: it changes on every answer
            return digest({"build": self.fingerprint, "answer": next(self._digests)})
        return digest({"build": self.fingerprint, "checks": list(CHECKS)})

    # -- lifecycle as recorded ------------------------------------------------------------------

    async def _baseline_changed(self, params: Any) -> None:
        """Ignored, as recorded: the session keeps the baseline it was initialized with."""

    async def _shutdown(self, params: Any, ctx: RequestContext) -> None:
        raise AspError(ErrorCode.METHOD_NOT_FOUND, "method-not-found")

    async def _exit(self, params: Any) -> None:
        """No exit handling: the process ends when the host closes stdin."""

    # -- check/evaluate -------------------------------------------------------------------------

    async def evaluate(self, call: Call) -> dict[str, Any]:
        params = dict(call.params) if isinstance(call.params, dict) else call.params
        checks = params.pop("checks", None) if isinstance(params, dict) else None
        if isinstance(params, dict):  # ignored by such providers, even when malformed
            params.pop("configuration", None)
            params.pop("rules", None)
            params.setdefault("scope", "changeset")
            params.setdefault("comparison", "all")
        if isinstance(params, dict) and params.get("callSite") not in (
            "interactive",
            "gate",
            "sweep",
        ):
            raise _internal("check/evaluate callSite must be interactive, gate, or sweep")
        if checks is not None:
            if not isinstance(checks, list) or not checks:
                raise _internal("At least one requested check is required")
            for check in checks:
                if check not in CHECKS:
                    raise _internal(f"Unsupported provider check: {str(check)[:80]}")
        selected = list(checks) if checks is not None else list(CHECKS)
        call.params = params
        assessment = await super().evaluate(call)
        await self._list_session_tree(call)
        return self._as_legacy(assessment, selected, call)

    async def _list_session_tree(self, call: Call) -> None:
        """As recorded: listTree for the baseline the session was initialized with."""
        baseline = self.session.baseline
        try:
            await call.callbacks.list_tree(baseline=baseline, globs=["**/*"])
        except AspError as error:
            raise _internal(
                f"listTree of the session baseline refused: {error.message[:100]}"
            ) from None

    def _as_legacy(
        self, assessment: dict[str, Any], selected: list[str], call: Call
    ) -> dict[str, Any]:
        """Rewrite a v1 Assessment into the recorded 0.1 shapes (scripted forgeries kept)."""
        request = parse_evaluate(call.params, protocol_version=self.session.protocol_version)
        paths = [change.path for change in request.changes] or ["."]
        timing = assessment.get("timing") or {}
        elapsed = int(timing.get("elapsedMs", 0)) if isinstance(timing, dict) else 0
        assessment["timing"] = {
            "durationMs": elapsed,
            "phases": [{"phase": "validation", "durationMs": elapsed}],
            "processState": "warm",
        }
        provider = assessment.get("provider")
        if isinstance(provider, dict) and self.behavior != "malformed":
            provider["capabilityVersion"] = "check/0.1"
            provider["configDigest"] = self.config_digest
        if LINES not in selected and isinstance(assessment.get("diagnostics"), list):
            assessment["diagnostics"] = []
        for diagnostic in assessment.get("diagnostics") or []:
            span = diagnostic.get("location", {}).get("range")
            if isinstance(span, dict):
                for end in ("start", "end"):
                    point = span[end]
                    span[end] = {"line": point["line"] + 1, "column": point["char"] + 1}
            diagnostic["code"] = f"{self.provider_id}/{LINES}/E1"
        coverage = assessment.get("coverage")
        if isinstance(coverage, dict) and assessment.get("status") == "complete":
            self._legacy_coverage(assessment, coverage, selected, paths)
        evidence = assessment.setdefault("evidence", [])
        evidence.append(
            {
                "kind": "message",
                "message": "Fake validation result mapped to ASP Core check assessment.",
                "data": {"checkCount": len(selected), "checks": selected},
            }
        )
        evidence.append({"kind": OUTSIDE_V1_KIND, "message": "a 0.1-era evidence kind"})
        return assessment

    def _legacy_coverage(
        self,
        assessment: dict[str, Any],
        coverage: dict[str, Any],
        selected: list[str],
        paths: list[str],
    ) -> None:
        scope = {"paths": paths}
        part = {"scope": scope, "diagnosticSources": [self.provider_id], "comparison": "all"}
        coverage["requested"] = {**part, "rules": selected}
        coverage["covered"] = {**part, "rules": selected}
        if REPO in selected:
            entry = {
                "source": self.provider_id,
                "reason": "unsupported",
                "requirement": "validation-result",
                "detail": f"Validation check does not support files scope: {REPO}",
            }
            assessment["status"] = "unsupported"
            assessment["diagnostics"] = []
            coverage.update(degraded=[entry], unsupported=[entry], exhaustive=False)
            return
        if PYTHON in selected and not any(p.endswith(".py") for p in paths):
            coverage["covered"] = {**part, "rules": [c for c in selected if c != PYTHON]}
            assessment["status"] = "incomplete"
            coverage.update(
                degraded=[
                    {
                        "source": self.provider_id,
                        "reason": "unavailable",
                        "requirement": PYTHON,
                        "detail": "No Python-owned files were selected.",
                    }
                ],
                exhaustive=False,
            )
