"""The callers a change to a function's parameters breaks, for one `check/evaluate`
(`python/broken-call`; the analysis is `check_calls.py`).

With either comparison: `across_files` reads each changed module's before-state (one blob each;
comparison `all` reads only after-states otherwise), and nothing more is listed or read unless a
plain function's parameters changed. Then the after-state files whose
import lines spell the function or its module (`check_imports.ImportWords`, kept by blob id) and
the changed module itself are parsed, and each call tied to the function for sure is bound to its
parameters before and after the change: a call that bound before and does not now is a finding at
the call (it raises TypeError when it runs). Imports resolve by the rules of `check_imports`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from reference_host.providers.assessment import EvaluateRequest, degradation
from reference_host.providers.check_calls import Bindings, Signature, calls_of, changed_between
from reference_host.providers.check_fork import judged
from reference_host.providers.check_importers import after_state, importer_findings, spelled
from reference_host.providers.check_imports import ImportWords, Resolver, parse
from reference_host.providers.check_reads import Target, baseline_files, both_states, read_batched
from reference_host.providers.check_summary import Summaries
from reference_host.providers.python_rules import (
    BROKEN_CALL,
    BROKEN_IMPORT,
    SOURCE,
    RawFinding,
    bind,
)
from reference_host.providers.runtime import Call

PY_GLOBS = ["**/*.py"]


@dataclass
class Kept:
    """What the rules across files keep between evaluations, by blob id (one per provider)."""

    words: ImportWords = field(default_factory=ImportWords)
    summaries: Summaries = field(default_factory=Summaries)


#: module dotted name -> function name -> (before, after)
Changed = dict[str, dict[str, tuple[Signature, Signature]]]


async def across_files(
    call: Call,
    request: EvaluateRequest,
    targets: list[Target],
    kept: Kept,
    served: dict[str, bytes],
    rules: list[str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(diagnostics, degraded) of the two rules across files that *rules* asks for: importers of
    what the change removes (`check_importers`), callers of functions whose parameters changed."""
    diagnostics: list[dict[str, Any]] = []
    degraded: list[dict[str, Any]] = []
    if BROKEN_IMPORT not in rules and BROKEN_CALL not in rules:
        return diagnostics, degraded
    # what a change removed is told by a changed module's before-state, which comparison `all`
    # does not otherwise read: one blob per changed module, never the tree
    grant = call.session.read_grant
    before = [
        t.before
        for t in targets
        if t.before
        and t.after
        and t.before != t.after
        and t.path == t.before_path
        and t.path.endswith(".py")
        and t.before not in served
        and grant.allows(t.path)
    ]
    if before:
        got, missing = await read_batched(call.callbacks, list(dict.fromkeys(before)))
        served = {**served, **got}
        degraded += [degradation(SOURCE, "incomplete", f"across files: {w}") for w in missing]
    changed = [t for t in targets if both_states(t, served)]  # both rules compare them
    await kept.summaries.of({b: served[b] for t in changed for b in (t.before, t.after) if b})
    if BROKEN_IMPORT in rules:
        imports = await importer_findings(
            call, request, targets, kept.words, served, kept.summaries
        )
        diagnostics += imports.diagnostics
        degraded += imports.degraded
    if BROKEN_CALL in rules:
        calls, left = await caller_findings(call, request, targets, kept, served)
        diagnostics += calls
        degraded += left
    return diagnostics, degraded


async def caller_findings(
    call: Call,
    request: EvaluateRequest,
    targets: list[Target],
    kept: Kept,
    served: dict[str, bytes],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(diagnostics, degraded) of the calls this evaluation's change breaks (*served* holds the
    before- and after-state of each changed module)."""
    altered = await _altered(targets, served, kept.summaries)
    if not altered:
        return [], []
    listed = await baseline_files(call.callbacks, request.baseline, PY_GLOBS)
    if listed is None or listed[1]:
        why = "broken-call: workspace/listTree was refused or cut short, callers not checked"
        return [], [degradation(SOURCE, "incomplete", why)]
    after = after_state(listed[0], targets)
    resolver = Resolver(list(listed[0]), list(after))
    changed: Changed = {}
    for path, functions in altered.items():
        info = resolver.after.get(path)
        for name in (info.primary, *info.aliases) if info is not None else ():
            changed[name] = functions
    grant = call.session.read_grant
    readable = {p: b for p, b in after.items() if grant.allows(p)}
    wanted = {n.encode() for fs in altered.values() for n in fs}
    wanted |= {m.rpartition(".")[2].encode() for m in changed}
    read = await spelled(call.callbacks, readable, kept.words, served, wanted, frozenset(altered))
    known, spelling = read.known, read.spelling
    missing = (read.missing + read.missing_more)[:20]
    degraded = [degradation(SOURCE, "incomplete", why) for why in missing]
    introduced = request.comparison == "introduced"
    diagnostics: list[dict[str, Any]] = []
    # every call of a changed function spells its name (`f(`, `m.f(`, or `f` on the import
    # line of `from m import f as g`): a file that spells none is not parsed (on a release
    # diff, module names such as `base` or `models` made most of the tree a candidate)
    spelling_a_name = re.compile(
        rb"\b(?:"
        + b"|".join(re.escape(n.encode()) for fs in altered.values() for n in fs)
        + rb")\b"
    )
    files = [
        (path, known[blob])
        for path, blob in sorted(spelling.items())
        if blob in known and spelling_a_name.search(known[blob])
    ]
    modules = {path: info.primary for path, info in resolver.after.items()}
    for path, raw in await judged(files, _calls_in, (changed, resolver, modules)):
        bound = bind(raw, path)
        diagnostics.extend({**d, "introduced": True} if introduced else d for d in bound)
    return diagnostics, degraded


async def _altered(
    targets: list[Target], served: dict[str, bytes], summaries: Summaries
) -> dict[str, dict[str, tuple[Signature, Signature]]]:
    """path -> the functions whose parameters its change altered, from both states' summaries."""
    pairs = [t for t in targets if both_states(t, served)]
    known = await summaries.of({b: served[b] for t in pairs for b in (t.before, t.after) if b})
    altered: dict[str, dict[str, tuple[Signature, Signature]]] = {}
    for t in pairs:
        old, new = known.get(t.before or ""), known.get(t.after or "")
        if old is None or new is None or not old.parsed or not new.parsed:
            continue
        found = changed_between(old.signatures, new.signatures)
        if found:
            altered[t.path] = found
    return altered


def _calls_in(
    files: list[tuple[str, bytes]], context: tuple[Changed, Resolver, dict[str, str]]
) -> list[tuple[str, list[RawFinding]]]:
    """Each file's broken calls (in a worker thread or process, `check_fork`)."""
    changed, resolver, modules = context
    out: list[tuple[str, list[RawFinding]]] = []
    for path, data in files:
        tree = parse(data)
        if tree is not None:
            out.append((path, broken_calls(tree, path, changed, resolver, modules.get(path))))
    return out


def broken_calls(
    tree: ast.Module, path: str, changed: Changed, resolver: Resolver, module: str | None
) -> list[RawFinding]:
    """The calls of *tree* (the after-state of *path*, module *module*) that bound to a changed
    function before and do not now."""
    direct, modules = _imported(tree, path, changed, resolver)
    if module is not None and module in changed:
        direct.update({name: f"{module} {name}" for name in changed[module]})
    findings: list[RawFinding] = []
    for node, owner, function in calls_of(tree, direct, modules):
        pair = changed.get(owner, {}).get(function)
        if pair is None or pair[0].problem(node) is not None:
            continue  # not a changed function, or a call that did not bind before either
        problem = pair[1].problem(node)
        if problem is not None:
            findings.append(
                RawFinding(
                    BROKEN_CALL,
                    f"'{function}' of {owner} {problem} (its parameters changed)",
                    (node.lineno - 1, node.col_offset),
                    ((node.end_lineno or node.lineno) - 1, node.end_col_offset or 0),
                    f"call:{owner}.{function}",
                )
            )
    return findings


def _imported(
    tree: ast.Module, path: str, changed: Changed, resolver: Resolver
) -> tuple[dict[str, str], dict[str, str]]:
    """(local name -> "module function", local name -> module) of *tree*'s imports of changed
    functions and of their modules; a local name the file binds any other way is dropped."""
    direct: dict[str, str] = {}
    modules: dict[str, str] = {}
    package = resolver.package_of(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                named = alias.asname and alias.name in changed
                if named and resolver.definite(alias.name, path, False):
                    modules[str(alias.asname)] = alias.name
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        base = _base(node, package)
        if base is None:
            continue
        relative = node.level > 0
        for alias in node.names:
            local, sub = alias.asname or alias.name, f"{base}.{alias.name}"
            if alias.name in changed.get(base, {}) and resolver.definite(base, path, relative):
                direct[local] = f"{base} {alias.name}"
            elif sub in changed and resolver.definite(sub, path, relative):
                modules[local] = sub
    bindings = Bindings.of(tree) if direct or modules else None
    for table in (direct, modules):
        for local in [n for n in table if bindings and bindings.otherwise(n, definitions=0)]:
            del table[local]
    return direct, modules


def _base(node: ast.ImportFrom, package: str | None) -> str | None:
    """The absolute module a `from ... import` names, or None when it cannot be said."""
    if node.level == 0:
        return node.module or None
    if not package:
        return None
    parts = package.split(".")
    if node.level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, node.module] if node.module else parts) or None
