"""The cross-file part of one `check/evaluate`: which importers a change breaks (`check_imports`).

Reads through the same callbacks as the rest of the check, and says what it could not read: a
baseline listing the host cut short, importers outside the read grant or not served are degraded
coverage (incomplete), never a silent "no broken import".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asp_protocol.grants import ReadGrant
from reference_host.providers.assessment import EvaluateRequest, degradation
from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.check_fork import judged
from reference_host.providers.check_imports import (
    ImportWords,
    Removed,
    Resolver,
    broken_imports,
    parse,
)
from reference_host.providers.check_reads import (
    Target,
    baseline_files,
    both_states,
    read_batched,
)
from reference_host.providers.check_summary import Summaries, Summary, summarize
from reference_host.providers.check_uses import (
    Shadows,
    broken_uses,
    package_shadows,
    parents,
)
from reference_host.providers.python_rules import SOURCE, RawFinding, bind
from reference_host.providers.runtime import Call

PY_GLOBS = ["**/*.py"]


@dataclass
class ImporterFindings:
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    degraded: list[dict[str, Any]] = field(default_factory=list)


class ImporterScan:
    """One evaluation's look at the importers of what its change removes."""

    def __init__(
        self,
        callbacks: HostCallbacks,
        baseline: dict[str, Any] | None,
        targets: list[Target],
        grant: ReadGrant,
        words: ImportWords,
        introduced: bool,
        summaries: Summaries | None = None,
    ) -> None:
        self.callbacks = callbacks
        self.baseline = baseline
        self.targets = targets
        self.grant = grant
        self.words = words
        self.introduced = introduced  # every finding is brought by the change: mark it so
        self.summaries = summaries
        self.out = ImporterFindings()

    def _degrade(self, why: str) -> None:
        self.out.degraded.append(degradation(SOURCE, "incomplete", f"broken-import: {why}"))

    async def run(self, served: dict[str, bytes]) -> ImporterFindings:
        """Nothing is listed or read unless the change removes something: a module it deletes or
        moves away, or a top-level name of a changed module (both states are in *served*, read
        by `check_callers.across_files` with either comparison): an evaluation of changed files
        that removes nothing must not make the host hash the whole tree."""
        moved = [
            t
            for t in self.targets
            if t.before_path.endswith(".py") and (t.after is None or t.path != t.before_path)
        ]
        lost = self._lost_names(served)
        if not moved and not lost:
            return self.out
        listed = await baseline_files(self.callbacks, self.baseline, PY_GLOBS)
        if listed is None or listed[1]:
            self._degrade("workspace/listTree was refused or cut short, importers not checked")
            return self.out
        before = listed[0]
        after = after_state(before, self.targets)
        resolver = Resolver(list(before), list(after))
        removed = Removed()
        for target in moved:
            if target.before_path in before and target.before_path not in after:
                removed.modules.update(resolver.gone(target.before_path))
        for path, (names, exported) in lost.items():
            info = resolver.after.get(path)
            for name in (info.primary, *info.aliases) if info is not None else ():
                removed.names[name] = names
                if exported:
                    removed.exported[name] = exported
        if removed:
            await self._scan(after, removed, resolver, served)
        return self.out

    def _lost_names(self, served: dict[str, bytes]) -> dict[str, tuple[set[str], set[str]]]:
        """path -> (top-level names its module had before the change and has not after, those of
        them its after-state `__all__` still lists), for the changed modules whose two states
        *served* holds (their summaries are made beforehand, `check_callers.across_files`; a
        state without one is summarized here)."""
        lost: dict[str, tuple[set[str], set[str]]] = {}
        for t in self.targets:
            if not both_states(t, served):
                continue
            assert t.before is not None and t.after is not None
            old, new = self._summary(t.before, served), self._summary(t.after, served)
            had, has = old.names, new.names
            if had is not None and has is not None and had - has:
                gone = set(had - has)
                lost[t.path] = (gone, gone & set(new.exported or ()))
        return lost

    def _summary(self, blob: str, served: dict[str, bytes]) -> Summary:
        known = self.summaries.get(blob) if self.summaries is not None else None
        return known if known is not None else summarize(served[blob])

    async def _scan(
        self, after: dict[str, str], removed: Removed, resolver: Resolver, known: dict[str, bytes]
    ) -> None:
        wanted = removed.words()
        readable = {p: b for p, b in after.items() if self.grant.allows(p)}
        if len(readable) < len(after):
            self._degrade(
                f"{len(after) - len(readable)} file(s) outside the read grant not checked"
            )
        inits = {
            package: after[info.path]
            for package in parents(removed)
            if (info := resolver.after_modules.get(package)) is not None
            and info.is_package
            and info.path in after
        }
        read = await spelled(
            self.callbacks, readable, self.words, known, wanted, extra=tuple(inits.values())
        )
        served, spelling = read.known, read.spelling
        for why in read.missing[:20] + read.missing_more[:20]:
            self._degrade(why)
        shadows: Shadows = {}
        for package, blob in inits.items():
            init = parse(served[blob]) if blob in served else None
            if init is not None:
                shadows[package] = package_shadows(init, package)
        files = [(path, served[blob]) for path, blob in sorted(spelling.items()) if blob in served]
        for path, raw in await judged(files, _judge, (removed, resolver, shadows)):
            found = bind(raw, path)
            if self.introduced:
                found = [{**d, "introduced": True} for d in found]
            self.out.diagnostics.extend(found)


def after_state(before: dict[str, str], targets: list[Target]) -> dict[str, str]:
    """path -> blob of the after-state's Python files: the baseline's (*before*), less what the
    change moves or deletes, with what it writes."""
    after = dict(before)
    for target in targets:
        after.pop(target.before_path, None)
    for target in targets:
        if target.after is not None and target.path.endswith(".py"):
            after[target.path] = target.after
    return after


@dataclass
class Spelled:
    """The files of an after-state whose import lines spell a wanted name, and their bytes."""

    spelling: dict[str, str]  # path -> blob
    known: dict[str, bytes]  # blob -> bytes: the spelling files', *extra*'s, what was served
    missing: list[str]  # why a blob read for its import words was not served
    missing_more: list[str]  # why a spelling (or extra) blob was not served


async def spelled(
    callbacks: HostCallbacks,
    readable: dict[str, str],
    words: ImportWords,
    served: dict[str, bytes],
    wanted: set[bytes],
    also: frozenset[str] = frozenset(),
    extra: tuple[str, ...] = (),
) -> Spelled:
    """Read the import words of every file of *readable* not known yet, then the bytes of the
    files spelling one of *wanted* (and the paths *also*, and the blobs *extra*)."""
    unknown = [b for b in dict.fromkeys(readable.values()) if words.known(b) is None]
    got, missing = await read_batched(callbacks, [b for b in unknown if b not in served])
    known = {**served, **got}
    for blob in unknown:
        if blob in known:
            words.learn(blob, known[blob])
    spelling = {
        p: b for p, b in readable.items() if p in also or (words.known(b) or frozenset()) & wanted
    }
    more = [b for b in dict.fromkeys([*spelling.values(), *extra]) if b not in known]
    missing_more: list[str] = []
    if more:
        fresh, missing_more = await read_batched(callbacks, more)
        known.update(fresh)
    return Spelled(spelling, known, missing, missing_more)


def _judge(
    files: list[tuple[str, bytes]], scan: tuple[Removed, Resolver, Shadows]
) -> list[tuple[str, list[RawFinding]]]:
    """Each file's raw findings (in a worker thread or process, `check_fork`)."""
    removed, resolver, shadows = scan
    out: list[tuple[str, list[RawFinding]]] = []
    for path, data in files:
        tree = parse(data)
        if tree is None:
            continue
        raw = broken_imports(path, tree, removed, resolver)
        if removed.names:
            raw += broken_uses(path, tree, removed, resolver, shadows)
        out.append((path, raw))
    return out


async def importer_findings(
    call: Call,
    request: EvaluateRequest,
    targets: list[Target],
    words: ImportWords,
    served: dict[str, bytes],
    summaries: Summaries | None = None,
) -> ImporterFindings:
    """The broken imports of one `check/evaluate` (its callbacks, read grant and comparison);
    *served*: the blobs the evaluation has read already; *summaries*: of the changed modules."""
    introduced = request.comparison == "introduced"
    grant = call.session.read_grant
    scan = ImporterScan(
        call.callbacks, request.baseline, targets, grant, words, introduced, summaries
    )
    return await scan.run(served)
