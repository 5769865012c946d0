"""What a host evaluation rested on, in the bridge's words: how many of the changed paths were
checked, which were not, which findings counted, and what the agent can do next.

One owner for "paths evaluated". `asp_ext_evaluate_changeset` states it twice, in its text and in
`bridgeResult.evaluation`, because the most-used clients hand the model only `structuredContent`
and a model reading only the verbatim host result would have to work the count out of
`coverage.degraded` itself. The migration check reads the unanalysed paths from here too. Paths
and reasons come from the host or the agent and are untrusted: they stay in `bridgeResult`, which
the label lists as untrusted, and in the text they are cleaned and capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bridge.summaries import as_dict, as_list, name_list, short

# coverage degradations meaning a check produced no assessment at all (not a partial one)
NOT_ASSESSED = frozenset(
    {
        "fail-open",
        "quarantined",
        "crashed",
        "skewed",
        "missing",
        "stale",
        "missing-required-provider",
        "stale-baseline",
        "error",
        "cancelled",
        "malformed",
        "timed-out",
        "unavailable",
        "incompatible",
        "unsupported-assurance",
    }
)
PATHS_LISTED = 100  # paths named in bridgeResult.evaluation per list: enough to ask again with


def unanalysed_paths(result: dict[str, Any]) -> frozenset[str]:
    """The paths a host decision lists as analysed by no required provider: the sources of its
    `unsupported` degradations that are not about a requirement's Assessment."""
    return frozenset(
        d["source"]
        for d in map(as_dict, as_list(as_dict(result.get("coverage")).get("degraded")))
        if d.get("reason") == "unsupported"
        and "requirement" not in d
        and isinstance(d.get("source"), str)
    )


def _leading_count(detail: Any) -> int | None:
    """The count a host's summary entry starts with (`"19950 more changed path(s) ..."`)."""
    found = re.match(r"(\d{1,9}) more\b", detail) if isinstance(detail, str) else None
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class EvaluatedPaths:
    """The changed paths an evaluation covered, as far as the host's result shows it."""

    changed: tuple[str, ...]
    unanalysed: tuple[str, ...]  # changed paths the host lists as analysed by no required provider
    unlisted: int  # unanalysed paths the host counts in a summary entry without naming them
    at_most: bool  # the host reports more unanalysed paths than it lists, without a count
    failure: tuple[str, str] | None  # (source, reason) of a required check with no assessment

    @property
    def evaluated(self) -> int | None:
        """How many changed paths were checked; None when none can be said to be."""
        if self.failure is not None:
            return None
        return max(0, len(self.changed) - len(self.unanalysed) - self.unlisted)

    @property
    def analysed(self) -> tuple[str, ...] | None:
        """The checked paths by name, when the host's result says exactly which they are."""
        if self.failure is not None or self.unlisted or self.at_most:
            return None
        skipped = set(self.unanalysed)
        return tuple(p for p in self.changed if p not in skipped)

    def line(self) -> str:
        """`Paths evaluated: ...`, the line every evaluate text carries."""
        if not self.changed:
            return "Paths evaluated: 0 (the ChangeSet is empty; nothing was checked)."
        if self.failure is not None:
            source, reason = self.failure
            return (
                f"Paths evaluated: none confirmed of {len(self.changed)} changed — a required "
                f"check gave no assessment ({source}: {reason}); treat every changed path as "
                "unchecked."
            )
        line = (
            f"Paths evaluated: {'at most ' if self.at_most else ''}{self.evaluated} of "
            f"{len(self.changed)} changed"
        )
        if self.unanalysed:
            line += f"; analysed by no required provider: {name_list(list(self.unanalysed))}"
            more = len(self.unanalysed) - 10 + self.unlisted
            line += f" (+{more} more)" if more > 0 else ""
        if self.at_most:
            line += "; the host reports more unanalysed paths than it lists (coverage.degraded)"
        return line + "."


def evaluated_paths(changeset: Any, result: dict[str, Any]) -> EvaluatedPaths:
    """Read *result* against the ChangeSet it decided on: its paths minus those the host listed
    (`coverage.degraded`, reason `unsupported`, source = path) or counted as analysed by no
    required provider; none at all when a check gave no assessment (timed out, crashed, ...)."""
    changed = tuple(
        dict.fromkeys(
            c["path"]
            for c in as_list(as_dict(changeset).get("changes"))
            if isinstance(as_dict(c).get("path"), str)
        )
    )
    degraded = [as_dict(d) for d in as_list(as_dict(result.get("coverage")).get("degraded"))]
    failed = [d for d in degraded if d.get("reason") in NOT_ASSESSED]
    failure = (short(failed[0].get("source")), short(failed[0].get("reason"))) if failed else None
    listed = unanalysed_paths(result)
    # past the paths it lists one by one, the host counts the rest in one entry of its own
    # ("N more changed path(s) ..."); a count it does not give means the total is unknown. An
    # entry naming a requirement is about a provider's Assessment, not about paths.
    beyond = [
        d
        for d in degraded
        if d.get("reason") == "unsupported"
        and d.get("source") not in changed
        and "requirement" not in d
    ]
    counts = [_leading_count(d.get("detail")) for d in beyond]
    return EvaluatedPaths(
        changed=changed,
        unanalysed=tuple(p for p in changed if p in listed),
        unlisted=sum(c for c in counts if c is not None),
        at_most=any(c is None for c in counts),
        failure=failure,
    )


@dataclass(frozen=True)
class FindingCounts:
    """The host's findings by disposition: `gating` ones decided, `advisory` ones did not."""

    total: int
    gating: int
    advisory: int
    unreadable: int


def finding_counts(result: dict[str, Any], unreadable: int) -> FindingCounts:
    raw = [as_dict(f) for f in as_list(result.get("findings"))]
    return FindingCounts(
        total=len(raw),
        gating=sum(f.get("disposition") == "gating" for f in raw),
        advisory=sum(f.get("disposition") == "advisory" for f in raw),
        unreadable=unreadable,
    )


RETRIED = frozenset({"timed-out", "fail-open", "cancelled", "crashed"})  # may answer next time


def _after_failure(source: str, reason: str) -> str:
    """The next step when a required check gave no assessment: what can change that depends on
    why (a dubious-ownership repository gave "ask again", which cannot help)."""
    if source == "git":
        return (
            "Next step: the host cannot use git in this workspace (coverage.degraded gives git's "
            "own reason, e.g. dubious ownership). Fix that outside the bridge, which never changes "
            "git's configuration, then evaluate again."
        )
    if reason in ("stale-baseline", "stale"):
        return (
            "Next step: the change is not against the host's current baseline. Evaluate the "
            "working tree again (omit `changeset`), or rebuild the changeset on the baseline "
            "asp_status shows."
        )
    if reason == "quarantined":
        return (
            "Next step: the host quarantined the check after repeated failures and will not run "
            "it again; asp_debug_host shows why, and restarting the bridge restarts the host."
        )
    if reason in RETRIED:
        return (
            "Next step: ask again. A required check gave no assessment; a check that was still "
            "working resumes where it stopped. If it keeps failing, asp_status and asp_debug_host "
            "show the provider's state."
        )
    return (
        "Next step: the host cannot run a required check here (coverage.degraded says why); "
        "asp_status shows each provider's state and the policy's requirements."
    )


def next_step(
    decision: str,
    paths: EvaluatedPaths,
    findings: FindingCounts,
    inline: bool,
    introduced: bool = False,
) -> str:
    """What the agent can do with this answer: the bridge's own advice, no host text in it.
    *introduced*: the evaluation asked only for the findings the change brings."""
    if not paths.changed and decision == "allow":
        return "Next step: none — nothing changed, so the allow says only that nothing was checked."
    if not paths.changed:
        # e.g. the only edit is inside a submodule, which no ChangeSet can carry
        return (
            f"Next step: the ChangeSet is empty, yet the host answers {decision}: "
            "coverage.degraded (above) names what it could not evaluate (work-tree paths the "
            "change cannot carry, such as edits inside a submodule); check those where they live."
        )
    if paths.failure is not None:
        return _after_failure(*paths.failure)
    if decision == "allow":
        return (
            "Next step: none for these paths — each changed path was analysed by a required "
            "provider and nothing blocking was found. This answer stays advisory: the blocking "
            "gate runs in the host itself (a pre-commit hook or CI)."
        )
    if decision == "deny":
        step = (
            f"Next step: fix the {findings.gating} finding(s) that decided (disposition gating), "
            "then evaluate again."
        )
        # comparison "all" also reports what the changed files held before (Salt: three of four)
        return (
            step
            if introduced
            else step
            + (
                ' If some were there before this change, comparison "introduced" keeps only the '
                "findings it brings."
            )
        )
    unchecked = len(paths.unanalysed) + paths.unlisted
    if not unchecked and not paths.at_most:
        return (
            "Next step: coverage.degraded (above) says why the host could not decide; asp_status "
            "shows its readiness, baseline and policy."
        )
    kind = (
        "add a check provider for their kind and require it in the repository policy (README, "
        '"What allow covers")'
    )
    if any(p.endswith((".py", ".pyi")) for p in paths.unanalysed):
        # Home Assistant under a 3.11 host: its 3.13 files were "of a kind no provider checks"
        kind = (
            "see coverage.degraded for why a Python file was not read (code for a newer Python "
            "than the host runs on: run the host on that Python; too large: raise the check's "
            "maxFileBytes) and, for other kinds, " + kind
        )
    if not paths.evaluated:
        return f"Next step: no changed path is of a kind a required provider checks; {kind}."
    again = (
        "with a changeset that leaves them out"
        if inline
        else "with `paths` set to the analysed paths (bridgeResult.evaluation.analysedPaths)"
    )
    step = (
        f"Next step: the host decides nothing while {unchecked} changed path(s) are analysed by "
        f"no required provider. For a decision on the {paths.evaluated} analysed path(s) alone, "
        f"call asp_ext_evaluate_changeset again {again}; the others stay unchecked. To have them "
        f"checked, {kind}."
    )
    if findings.advisory:
        step += (
            f" The {findings.advisory} advisory finding(s) are real findings in analysed files "
            "that could not decide on their own: fix them first."
        )
    return step


def evaluation_report(
    decision: str,
    call_site: str,
    paths: EvaluatedPaths,
    findings: FindingCounts,
    step: str,
) -> dict[str, Any]:
    """`bridgeResult.evaluation`: the same reading as the text, for structured-content readers."""
    analysed = paths.analysed
    return {
        "decision": decision,
        "callSite": call_site,
        "pathsChanged": len(paths.changed),
        "pathsEvaluated": paths.evaluated,
        "pathsEvaluatedIsUpperBound": paths.at_most,
        "unanalysedPathCount": len(paths.unanalysed) + paths.unlisted,
        "unanalysedPaths": list(paths.unanalysed[:PATHS_LISTED]),
        "analysedPaths": None if analysed is None else list(analysed[:PATHS_LISTED]),
        "findings": {
            "total": findings.total,
            "gating": findings.gating,
            "advisory": findings.advisory,
            "unreadable": findings.unreadable,
        },
        "pathsLine": paths.line(),
        "nextStep": step,
    }
