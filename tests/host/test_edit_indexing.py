"""The edit provider's index builds in the background (reference_host/providers/python_edit.py,
pyindex/build.py, sessions/building.py), through the real host and `asp-python-edit`.

Found on ansible-core 2.19 (1,773 modules): each rename request rebuilt the index from scratch
inside its own 10 s budget, timed out, and after three the edit provider was quarantined for the
life of the host. The build is held deterministically with the provider's test-only
`--hold-build-requests N` (it starts once N requests asked for it), so no test depends on how
fast parsing is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from reference_host.context import HostContext
from reference_host.edit.plan import request_edit_plan
from reference_host.providers import PYTHON_EDIT
from reference_host.trust.manifests import InstalledProvider
from tests.host.test_inspect_host import host
from tests.host.test_inspect_indexing import builtin_with, generated
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo, snapshot_tree
from tests.support.inspect_sample import ROUND_CENTS

pytestmark = pytest.mark.anyio
PROVIDER = PYTHON_EDIT.id
PLAN = "outer-host.schema.json#/$defs/requestEditPlanResult"


def edit_with(*options: str) -> dict[str, InstalledProvider]:
    return builtin_with(PYTHON_EDIT, *options)


async def rename(ctx: HostContext, new: str = "to_cents") -> dict[str, Any]:
    params = {
        "callSite": "interactive",
        "operation": "rename",
        "baseline": ctx.workspace.state().baseline(),
        "args": {"symbol": ROUND_CENTS, "newName": new},
    }
    result = await request_edit_plan(ctx, params)
    assert_valid(result, PLAN)
    proposal: dict[str, Any] = result["proposal"]
    return proposal


@pytest.mark.needs_definitions
async def test_a_plan_asked_while_indexing_is_incomplete_at_once_then_complete(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", generated(30))
    before = snapshot_tree(repo)
    settings = edit_with("--index-wait-ms", "0", "--hold-build-requests", "2")
    async with host(repo, extra=settings) as ctx:
        first = await rename(ctx)
        assert first["provider"]["id"] == PROVIDER, "the provider's own answer, not the host's"
        assert first["status"] == "incomplete", first
        incomplete = first["incomplete"]
        assert incomplete["reason"] == "budget-exhausted" and incomplete["recoverable"] is True
        files = len([p for p in generated(30) if p.endswith(".py")])
        assert f"indexing: 0 of {files} Python files parsed" in incomplete["detail"]
        done = None
        for _ in range(400):  # the second request released the build; poll until it is built
            again = await rename(ctx)
            if again["status"] != "incomplete":
                done = again
                break
            assert again["incomplete"]["reason"] == "budget-exhausted"
            await anyio.sleep(0.02)
        assert done is not None, "the background build never finished"
        assert done["status"] == "complete", done
        paths = {change["path"] for change in done["workspaceEdit"]["documentChanges"]}
        assert {f"src/gen/mod_{n}.py" for n in range(30)} <= paths
        record = ctx.supervisor.record(PROVIDER)
        assert record.failures == 0 and not record.quarantined
    assert snapshot_tree(repo) == before


@pytest.mark.needs_definitions
async def test_requests_that_meet_a_build_never_quarantine_the_provider(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", generated(10))
    settings = edit_with("--index-wait-ms", "0", "--hold-build-requests", "1000")
    async with host(repo, extra=settings) as ctx:
        for _ in range(5):  # more than the quarantine threshold
            assert (await rename(ctx))["status"] == "incomplete"
        record = ctx.supervisor.record(PROVIDER)
        assert record.failures == 0 and not record.quarantined and record.session is not None
        assert record.session.alive


@pytest.mark.needs_definitions
@pytest.mark.parametrize("mentions", [True, False])
async def test_a_file_that_does_not_parse_blocks_a_rename_only_if_it_may_use_the_name(
    tmp_path: Path, mentions: bool
) -> None:
    """Its uses are unknown to the index: a rename that may miss them is not complete."""
    broken = "print 'python 2'\nround_cents(1)\n" if mentions else "print 'python 2'\n"
    repo = make_repo(tmp_path / "repo", {**generated(2), "legacy/old.py": broken})
    async with host(repo, extra=edit_with()) as ctx:
        plan = await rename(ctx)
        for _ in range(400):
            if plan["status"] != "incomplete" or plan["incomplete"]["reason"] != "budget-exhausted":
                break
            await anyio.sleep(0.02)
            plan = await rename(ctx)
    if mentions:
        assert plan["status"] == "incomplete", plan
        assert plan["incomplete"]["reason"] == "unresolved-reference"
        assert "legacy/old.py could not be indexed" in plan["incomplete"]["detail"]
    else:
        assert plan["status"] == "complete", plan
