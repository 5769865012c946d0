"""The ADR 0025 case list: each case is data (workspace, providers, policy, request, properties).

Most cases run at call-site `gate`, because the extension must preserve even the call-site that
ordinary MCP tools may never send; each still gets `gateSatisfied: false` over MCP.
"""

from __future__ import annotations

import dataclasses

from asp_protocol.vocabulary import CallSite
from bridge.ext.bakeoff.spec import (
    DEFAULT_FILES,
    EDIT_PROVIDER_MODULE,
    RESULT_PROPERTIES,
    Action,
    Case,
    Expectation,
    ProviderSpec,
    RequestSpec,
    RequirementSpec,
)

EVALUATE = "host/evaluateChangeset"
EDIT_PLAN = "host/requestEditPlan"
APPLY = "host/applyProposal"

# What every evaluate case is judged on.
EVALUATE_PROPERTIES: tuple[str, ...] = (*RESULT_PROPERTIES, "gate-unsatisfiable")


def _single(
    name: str,
    title: str,
    behavior: str,
    *,
    expect: Expectation,
    assurance: tuple[str, ...] = ("advisory", "gated"),
    pin_version: str | None = None,
    extra_args: tuple[str, ...] = (),
    budgets: dict[str, int] | None = None,
    request: RequestSpec | None = None,
    properties: tuple[str, ...] = EVALUATE_PROPERTIES,
    needs: tuple[str, ...] = (),
) -> Case:
    """A case with one fake provider serving one required check requirement at every call-site."""
    provider = ProviderSpec(id=f"bake-{name}", behavior=behavior, extra_args=extra_args)
    return Case(
        name=name,
        title=title,
        request=request or RequestSpec(EVALUATE, "gate"),
        properties=properties,
        providers=(provider,),
        requirements=(
            RequirementSpec(
                id="bake-check", provider=provider.id, assurance=assurance, pin_version=pin_version
            ),
        ),
        budgets=budgets or {},
        expect=expect,
        needs=needs,
    )


RENAME = {"operation": "rename", "args": {"symbol": "greet", "newName": "welcome"}}


def _edit(
    name: str,
    title: str,
    check: str,
    *,
    action: Action,
    call_site: CallSite,
    properties: tuple[str, ...],
) -> Case:
    """An edit case: the built-in Python edit provider (installed from a trusted manifest and
    pinned by an edit requirement that is in no gate) renames `greet`; the check fake *check*
    judges the after-state. The work tree starts clean, so the plan's expected digests hold."""
    base = _single(name, title, check, expect=Expectation(), properties=properties)
    editor = ProviderSpec(
        id="asp-python-edit", behavior="rename", module=EDIT_PROVIDER_MODULE, capabilities=("edit",)
    )
    edit_req = RequirementSpec(
        id="bake-edit-req", provider=editor.id, call_sites=(), capabilities=("edit",)
    )
    return dataclasses.replace(
        base,
        request=RequestSpec(
            APPLY if action == "apply" else EDIT_PLAN, call_site, action=action, extra_params=RENAME
        ),
        providers=(*base.providers, editor),
        requirements=(*base.requirements, edit_req),
        change={},
        needs=("edit",),
    )


def all_cases() -> tuple[Case, ...]:
    """Every ADR 0025 case, in the order the report lists them."""
    return (
        _single("allow", "Allow", "clean", expect=Expectation(decision="allow")),
        _single(
            "deny",
            "Deny (blocking diagnostic)",
            "finding",
            expect=Expectation(decision="deny", degraded=("blocking-diagnostic",)),
        ),
        _single(
            "stale-baseline",
            "Stale baseline",
            "clean",
            expect=Expectation(decision="indeterminate", degraded=("stale-baseline",)),
            request=RequestSpec(EVALUATE, "gate", changeset="stale"),
        ),
        _single(
            "malformed-provider-output",
            "Malformed provider output",
            "malformed",
            expect=Expectation(decision="indeterminate", degraded=("malformed",)),
        ),
        _single(
            "cancellation",
            "Cancellation",
            "hang",
            extra_args=("--hang-seconds", "60"),
            expect=Expectation(error_code=-32016),
            request=RequestSpec(EVALUATE, "gate", action="cancel"),
            properties=("cancellation", "gate-unsatisfiable"),
        ),
        _single(
            "unsupported-capability",
            "Unsupported capability",
            "no-check-capability",
            expect=Expectation(decision="indeterminate", degraded=("unsupported",)),
        ),
        Case(
            name="missing-provider",
            title="Missing provider",
            request=RequestSpec(EVALUATE, "gate"),
            properties=EVALUATE_PROPERTIES,
            providers=(),
            requirements=(RequirementSpec(id="bake-check", provider="bake-not-installed"),),
            expect=Expectation(decision="indeterminate", degraded=("missing-required-provider",)),
        ),
        _single(
            "missing-authority",
            "Missing authority",
            "clean",
            pin_version="9.9.9",
            expect=Expectation(decision="indeterminate", degraded=("missing-authority",)),
        ),
        _single(
            "timeout",
            "Timeout",
            "hang",
            extra_args=("--hang-seconds", "60"),
            # Long enough that the provider always finishes initialize on a loaded machine, so the
            # timeout (and the authority evidence it leaves) always happens in check/evaluate.
            budgets={"interactiveMs": 2500, "gateMs": 2500, "sweepMs": 2500},
            expect=Expectation(decision="indeterminate", degraded=("timed-out",)),
            request=RequestSpec(EVALUATE, "gate", warm=False),
        ),
        _single(
            "insufficient-assurance",
            "Insufficient assurance",
            "clean",
            assurance=("gated",),
            expect=Expectation(decision="indeterminate", degraded=("insufficient-assurance",)),
        ),
        _single(
            "fast-path-bypass",
            "Fast-path bypass (check/evaluate sent to the host)",
            "clean",
            expect=Expectation(decision="deny", degraded=("lattice-fast-path",)),
            request=RequestSpec("check/evaluate", "gate", action="fast-path"),
            properties=("fast-path-blocked", "gate-unsatisfiable"),
        ),
        _edit(
            "edit-plan-request",
            "Edit-plan request",
            "clean",
            action="edit-plan",
            call_site="interactive",
            properties=("call-site", "request-identity", "receipt-kind", "gate-unsatisfiable"),
        ),
        _edit(
            "denied-apply",
            "Denied apply (validation denies the proposal)",
            "finding",
            action="apply",
            call_site="gate",
            properties=("mediated-apply", "apply-refused", "gate-unsatisfiable"),
        ),
        _edit(
            "applied-proposal",
            "Applied proposal",
            "clean",
            action="apply",
            call_site="gate",
            properties=("mediated-apply", "apply-refused", "gate-unsatisfiable"),
        ),
    )


def select(names: list[str] | None) -> tuple[Case, ...]:
    """The cases named (all when *names* is empty); an unknown name is a ValueError naming it."""
    cases = all_cases()
    if not names:
        return cases
    by_name = {c.name: c for c in cases}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(
            f"unknown bake-off case(s): {', '.join(unknown)}; known: {', '.join(by_name)}"
        )
    return tuple(by_name[n] for n in names)


__all__ = ["APPLY", "DEFAULT_FILES", "EDIT_PLAN", "EVALUATE", "all_cases", "select"]
