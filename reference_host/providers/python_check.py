"""`asp-python-check`: the built-in Python check provider, one process per host session.

`python -m reference_host.providers.python_check`. Capability `check/1.0`, diagnostic source
`python`, scopes `changeset`/`workspace` (and `{paths}` as a filtered workspace), comparisons `all`
and `introduced`; `resolved` is answered as an `unsupported` Assessment. Content arrives only
through `workspace/listTree` / `workspace/readBlob`, never the filesystem; paths outside the read
grant are not requested and are reported as degraded coverage. Rules, severities and fingerprints
live in `python_rules`.

`introduced` = after-state findings whose fingerprint is absent from the before-state (computed at
the after path, so a rename does not make old findings new); a created file's findings are all
introduced, a deleted file has none. Per file, unchanged files cannot introduce findings, so a
`workspace` + `introduced` request analyses only changed files; the rules across files read the
importers of what the change removes (`python/broken-import`, `check_imports.py`) and the callers
of functions whose parameters it changed (`python/broken-call`, `check_calls.py`). Non-Python
files in scope are skipped and listed in an evidence message; each *changed* non-Python path is
also listed in `coverage.unsupported`, `covered.scope` then names only the Python paths
(`{paths}`), and the status is `incomplete` (`unsupported` when no changed path is Python) —
never `complete` for files it did not analyse. Configuration: `check_settings.py`. Findings are
cached per (blob id, settings); every blob is still read through the callbacks so
`validAsOf.blobs` names exactly what this request read.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import Any

from asp_protocol import CHECK_CAPABILITY_VERSION
from asp_protocol.canonical import digest
from reference_host.providers import PYTHON_CHECK
from reference_host.providers.assessment import (
    EvaluateRequest,
    Stopwatch,
    build_assessment,
    coverage_part,
    degradation,
    parse_evaluate,
    provider_block,
)
from reference_host.providers.check_callers import Kept, across_files
from reference_host.providers.check_links import LinkFollower
from reference_host.providers.check_pool import analyse_many, analysis_jobs
from reference_host.providers.check_reads import (
    SingleFiles,
    Target,
    needed_blobs,
    read_batched,
    skipped_evidence,
    workspace_targets,
)
from reference_host.providers.check_scripts import python_scripts
from reference_host.providers.check_settings import CONFIGURATION
from reference_host.providers.configuration import EffectiveConfiguration, resolve_configuration
from reference_host.providers.findings_cache import FindingsCache
from reference_host.providers.grammar import TargetVersions
from reference_host.providers.lint_builtins import ProjectBuiltins, undefined_name
from reference_host.providers.noqa import honour_noqa
from reference_host.providers.pacing import Paced
from reference_host.providers.python_rules import (
    ALL_RULES,
    PACKAGE_INIT,
    SOURCE,
    TOO_MANY_PARAMETERS,
    AnalysisFailed,
    bind,
    is_python,
)
from reference_host.providers.runtime import Call, ProviderRuntime, check_capability, run_stdio

LISTED = 200  # paths named one by one in coverage.unsupported
PYPROJECT_GLOBS = ["pyproject.toml", "**/pyproject.toml"]
UNDEFINED = f"{SOURCE}/undefined-name"


def _is_pyproject(path: str) -> bool:
    return path.rpartition("/")[2] == "pyproject.toml"


@dataclass
class Outcome:
    """What one evaluation found and what it could not cover."""

    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    degraded: list[dict[str, Any]] = field(default_factory=list)
    unsupported: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False
    analysed: list[str] = field(default_factory=list)
    hits: int = 0
    # changed paths it did not analyse (code for a newer Python: grammar.py; too large, analyser
    # failed, not readable): left out of covered.scope, so the host lists them as not checked
    unanalysed: set[str] = field(default_factory=set)


class PythonCheckProvider(ProviderRuntime):
    """The runtime with one capability: `check/evaluate` over Python files."""

    def __init__(self) -> None:
        super().__init__(
            provider_id=PYTHON_CHECK.id,
            fingerprint=PYTHON_CHECK.fingerprint(),
            capabilities={"check": check_capability([SOURCE], ["all", "introduced"])},
        )
        self.cache = FindingsCache()
        self.across = Kept()  # what the rules across files keep between evaluations
        self.capability("check/evaluate", self.evaluate)

    async def evaluate(self, call: Call) -> dict[str, Any]:
        request = parse_evaluate(call.params, protocol_version=self.session.protocol_version)
        config = resolve_configuration(
            request.params, CONFIGURATION, self.provider_id, CHECK_CAPABILITY_VERSION
        )
        return await Evaluation(self, call, request, config).run()


class Evaluation:
    """One `check/evaluate`: select targets, read through callbacks, analyse, compare, report."""

    def __init__(
        self,
        provider: PythonCheckProvider,
        call: Call,
        request: EvaluateRequest,
        config: EffectiveConfiguration,
    ) -> None:
        self.provider = provider
        self.call = call
        self.request = request
        self.config = config
        self.clock = Stopwatch()
        self.out = Outcome()
        settings = config.values
        self.max_parameters: int | None = settings["verify"]["maxParameters"]
        disabled = set(settings["disabledRules"] or ())
        if self.max_parameters is None:
            disabled.add(TOO_MANY_PARAMETERS)
        self.enabled = [rule for rule in ALL_RULES if rule not in disabled]
        after = {t.path: t.after for t in self._changed_targets()}
        files = SingleFiles(call.callbacks, request.baseline, after)
        pyprojects = functools.partial(files.current, PYPROJECT_GLOBS, _is_pyproject)
        self.targets = TargetVersions(settings["targetVersion"], pyprojects, files.read)
        self.builtins = set(settings["builtins"] or ())
        self.project = ProjectBuiltins(files) if settings["projectBuiltins"] else None
        self.links = LinkFollower(call.callbacks, request.baseline)  # a link's code is its target's
        self.served: dict[str, bytes] = {}  # blob -> bytes this evaluation read
        self.scripts: set[str] = set()  # changed paths without a suffix that are Python scripts

    def _assessment(
        self, status: str, requested: dict[str, Any], covered: dict[str, Any]
    ) -> dict[str, Any]:
        out = self.out
        hit = bool(out.analysed) and out.hits == len(out.analysed)
        cache = {
            "status": "hit" if hit else "miss",
            "key": digest({"config": self.config.digest, "blobs": sorted(set(out.analysed))}),
        }
        return build_assessment(
            status=status,
            diagnostics=out.diagnostics,
            requested=requested,
            covered=covered,
            degraded=out.degraded,
            unsupported=out.unsupported,
            exhaustive=status == "complete" and not out.truncated,
            truncated=out.truncated,
            request=self.request,
            blobs=self.call.callbacks.blobs_read,
            provider=provider_block(
                self.provider.provider_id,
                self.provider.version,
                self.config.digest,
                self.provider.fingerprint,
            ),
            timing=self.clock.timing(),
            cache=cache,
            evidence=out.evidence,
        )

    def _unsupported(self, requested: dict[str, Any], detail: str) -> dict[str, Any]:
        entry = degradation(SOURCE, "unsupported", detail)
        self.out.unsupported.append(entry)
        self.out.degraded.append(entry)
        covered = coverage_part(self.request.scope, [], [], self.request.comparison)
        return self._assessment("unsupported", requested, covered)

    async def run(self) -> dict[str, Any]:
        request = self.request
        sources = request.diagnostic_sources or [SOURCE]
        rules = request.rules or list(self.enabled)
        requested = coverage_part(request.scope, sources, rules, request.comparison)
        covered_rules = [rule for rule in rules if rule in self.enabled]
        if request.comparison == "resolved":
            return self._unsupported(requested, "Unsupported comparison: resolved.")
        if SOURCE not in sources:
            return self._unsupported(
                requested, f"This provider covers only the diagnostic source {SOURCE!r}."
            )
        if not covered_rules:
            return self._unsupported(
                requested, "None of the requested rules is provided and enabled."
            )
        for source in sources:
            if source != SOURCE:
                self.out.unsupported.append(
                    degradation(source, "unsupported", "diagnostic source not provided")
                )
        for rule in rules:
            if rule not in self.enabled:
                why = "disabled by configuration" if rule in ALL_RULES else "unknown rule"
                self.out.unsupported.append(
                    degradation(SOURCE, "unsupported", f"{rule[:120]}: {why}")
                )
        targets = await self._targets()
        await self._analyse(targets, set(covered_rules))
        changed, kept = self._changed_targets(), self.provider.across
        found, left = await across_files(
            self.call, request, changed, kept, self.served, covered_rules
        )
        self.out.diagnostics.extend(found)
        self.out.degraded.extend(left)
        scope, sources = self._covered_scope()
        covered = coverage_part(scope, sources, covered_rules, request.comparison)
        status = (
            "incomplete"
            if self.out.degraded or self.out.unsupported or self.out.truncated
            else "complete"
        )
        if not sources:
            status = "unsupported"
        return self._assessment(status, requested, covered)

    def _covered_scope(self) -> tuple[Any, list[str]]:
        """What this run covered: every changed path is Python, or only the Python ones
        (`{paths}`), or none (no sources). Each changed non-Python path is listed unsupported."""
        changed = list(dict.fromkeys(t.path for t in self._changed_targets()))
        foreign = [p for p in changed if not self._python(p)]
        if not foreign and not self.out.unanalysed:
            return self.request.scope, [SOURCE]
        for path in foreign[:LISTED]:  # the host lists every unanalysed path itself
            self.out.unsupported.append(
                degradation(
                    SOURCE,
                    "unsupported",
                    f"{path[:200]}: not Python; {SOURCE} analyses *.py, *.pyi and scripts "
                    "whose first line runs python",
                )
            )
        python = [p for p in changed if self._python(p) and p not in self.out.unanalysed]
        return ({"paths": python}, [SOURCE]) if python else (self.request.scope, [])

    # -- what to look at ------------------------------------------------------------------------

    def _changed_targets(self) -> list[Target]:
        targets = []
        for change in self.request.changes:
            if change.kind == "rename":
                after = change.after or change.before
                targets.append(
                    Target(change.path, after, change.before, change.from_ or change.path)
                )
            else:
                after = None if change.kind == "delete" else change.after
                before = None if change.kind == "create" else change.before
                targets.append(Target(change.path, after, before, change.path))
        return targets

    async def _targets(self) -> list[Target]:
        changed = self._changed_targets()
        scope = self.request.scope
        if scope == "changeset" or self.request.comparison == "introduced":
            selected = changed  # unchanged files cannot introduce a finding: no need to list them
        else:
            selected = await self._workspace_targets(changed)
            if isinstance(scope, dict):
                prefixes = [p.strip("/") for p in scope["paths"]]
                selected = [
                    t
                    for t in selected
                    if any(t.path == p or t.path.startswith(p + "/") for p in prefixes)
                ]
        self.scripts = await python_scripts(self.call, selected)  # `bin/tool`: `#!...python3`
        self.out.evidence.extend(
            skipped_evidence([t.path for t in selected if not self._python(t.path)])
        )
        return sorted((t for t in selected if self._python(t.path)), key=lambda t: t.path)

    def _python(self, path: str) -> bool:
        return is_python(path) or path in self.scripts

    async def _workspace_targets(self, changed: list[Target]) -> list[Target]:
        listed = await workspace_targets(self.call.callbacks, self.request.baseline, changed)
        self.out.degraded.extend(listed.degraded)
        self.out.truncated = self.out.truncated or listed.truncated
        return listed.targets

    # -- reading and analysing -------------------------------------------------------------------

    async def _read(self, targets: list[Target]) -> dict[str, bytes]:
        grant = self.call.session.read_grant
        wanted: list[str] = []
        for target in list(targets):
            needs = needed_blobs(target, self.request.comparison)
            outside = [path for path, _ in needs if not grant.allows(path)]
            if outside:
                self.out.unanalysed.add(target.path)
                why = f"{target.path[:200]}: outside the read grant, not checked"
                self.out.degraded.append(degradation(SOURCE, "incomplete", why))
                targets.remove(target)
            else:
                wanted.extend(blob for _, blob in needs)
        served, missing = await read_batched(self.call.callbacks, list(dict.fromkeys(wanted)))
        served, unread, escaped = await self.links.follow(targets, served)
        self.out.degraded.extend(degradation(SOURCE, "incomplete", w) for w in missing + unread)
        for path, why in escaped:
            self._unchecked(path, why)
        return served

    def _unchecked(self, path: str, why: str) -> None:
        self.out.unanalysed.add(path)
        if len(self.out.unanalysed) <= LISTED:  # the host lists every unanalysed path
            self.out.unsupported.append(degradation(SOURCE, "unsupported", why))

    async def _findings(
        self, path: str, blob: str, data: bytes, after: bool = True
    ) -> list[dict[str, Any]] | None:
        if len(data) > self.config.values["maxFileBytes"]:
            self.out.truncated = True
            self.out.unanalysed.add(path)
            self.out.degraded.append(
                degradation(SOURCE, "incomplete", f"{path[:200]}: larger than maxFileBytes")
            )
            return None
        try:
            init = path.rpartition("/")[2] == PACKAGE_INIT
            raw, hit = await self.provider.cache.findings(blob, data, self.max_parameters, init)
        except AnalysisFailed as failure:
            self.out.unanalysed.add(path)
            self.out.degraded.append(
                degradation(SOURCE, "error", f"{path[:200]}: analyser failed ({failure})")
            )
            return None
        self.out.analysed.append(blob)
        self.out.hits += int(hit)
        refused = next((f for f in raw if f.unparsed_line is not None), None) if after else None
        if refused is not None:  # the parser refused it: maybe code for a newer Python
            why = await self.targets.unchecked(path, refused.message, refused.unparsed_line or "")
            if why is not None:
                self._unchecked(path, why)
                return None
        if any(f.code == UNDEFINED for f in raw):  # a declared builtin is defined (lint_builtins)
            names = self.builtins | (await self.project.names() if self.project else set())
            raw = [f for f in raw if f.code != UNDEFINED or undefined_name(f.message) not in names]
        if self.config.values["honourNoqa"]:
            raw = honour_noqa(raw, data)
        return bind(raw, path)

    async def _analyse(self, targets: list[Target], rules: set[str]) -> None:
        served = self.served = await self._read(targets)
        introduced = self.request.comparison == "introduced"
        paced = Paced(self.call, len(targets))  # slow, not hung, to the host
        max_bytes, comparison = self.config.values["maxFileBytes"], self.request.comparison
        jobs = analysis_jobs(targets, served, comparison, max_bytes, self.max_parameters)
        await analyse_many(self.provider.cache, jobs, paced.at, len(targets))  # both cores
        for index, target in enumerate(targets):
            await paced.at(index)
            needs = needed_blobs(target, self.request.comparison)
            if any(blob not in served for _, blob in needs):
                self.out.unanalysed.add(target.path)  # refused or unreadable: said in degraded
            if not needs or target.path in self.out.unanalysed:
                continue
            after = await self._findings(target.path, needs[0][1], served[needs[0][1]])
            if after is None:
                continue
            after = [d for d in after if d["code"] in rules]
            if introduced:
                before_fps: set[str] = set()
                if len(needs) > 1:
                    before_blob = needs[1][1]
                    before = await self._findings(
                        target.path, before_blob, served[before_blob], after=False
                    )
                    if before is None:
                        continue
                    before_fps = {d["fingerprint"] for d in before}
                after = [
                    {**d, "introduced": True} for d in after if d["fingerprint"] not in before_fps
                ]
            self.out.diagnostics.extend(after)


def main() -> int:
    return run_stdio(PythonCheckProvider())


if __name__ == "__main__":
    sys.exit(main())
