"""The edit profile on a fresh repository: the built-in default policy and `asp-python-edit`.

Real `asp-host serve` over pipes, no trusted dir, no `.asp/asp.json`: a rename plan is
schema-valid and writes nothing, apply writes exactly that plan, and a plan made stale by a later
write is refused with the work tree byte-identical.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo, snapshot_tree
from tests.support.host_harness import HostProcess
from tests.support.renamed import with_plan

FILES = {
    "lib/__init__.py": "",
    "lib/shapes.py": "import math\nimport os\n\n\ndef area(r):\n    return math.pi * r * r\n",
    "main.py": "from lib.shapes import area\n\nprint(area(2))\n",
}
PLAN = "outer-host.schema.json#/$defs/requestEditPlanResult"
APPLY = "outer-host.schema.json#/$defs/applyProposalResult"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[tuple[HostProcess, Path]]:
    repo = make_repo(tmp_path / "repo", FILES)
    process = HostProcess(repo, None).start()
    yield process, repo
    assert process.stop() == 0


def _plan(host: HostProcess, operation: str, args: dict[str, Any]) -> dict[str, Any]:
    baseline = host.call("host/status", {})["workspace"]["baseline"]
    result = host.call(
        "host/requestEditPlan",
        {"callSite": "interactive", "operation": operation, "baseline": baseline, "args": args},
        timeout=60,
    )
    assert_valid(result, PLAN)
    return result


def _apply(host: HostProcess, proposal_id: str) -> dict[str, Any]:
    params = {"callSite": "interactive", "proposalId": proposal_id, "intent": "user"}
    result = host.call("host/applyProposal", params, timeout=60)
    assert_valid(result, APPLY)
    return result


def _expected(repo: Path, plan: dict[str, Any]) -> dict[str, bytes]:
    """The work tree the plan describes, computed here from its text edits."""
    return with_plan(snapshot_tree(repo), plan)


@pytest.mark.needs_definitions
def test_rename_plan_writes_nothing_and_apply_writes_exactly_it(
    host: tuple[HostProcess, Path],
) -> None:
    process, repo = host
    status = process.call("host/status", {})
    assert status["capabilities"]["edit"]["available"] is True
    before = snapshot_tree(repo)
    result = _plan(process, "rename", {"symbol": "lib.shapes.area", "newName": "disc_area"})
    plan = result["proposal"]
    assert plan["status"] == "complete" and plan["provider"]["id"] == "asp-python-edit"
    assert {t["path"] for t in plan["touchedResources"]} == {"lib/shapes.py", "main.py"}
    assert result["receipt"]["coverage"]["ran"] == ["python-edit"]
    assert snapshot_tree(repo) == before, "a plan writes nothing"
    expected = _expected(repo, plan)
    applied = _apply(process, plan["proposalId"])
    assert applied["applied"] is True, applied.get("refusal")
    assert applied["decision"]["decision"] == "allow"
    assert applied["receipt"]["authorityEvidence"][0]["authority"]["granted"] is True
    assert snapshot_tree(repo) == expected
    assert b"def disc_area(r):" in expected["lib/shapes.py"]
    assert expected["main.py"] == b"from lib.shapes import disc_area\n\nprint(disc_area(2))\n"


@pytest.mark.needs_definitions
def test_stale_plans_are_refused_and_the_tree_is_untouched(host: tuple[HostProcess, Path]) -> None:
    process, repo = host
    # a later write to a touched file: the expected-before digest no longer matches
    plan = _plan(process, "remove-unused-imports", {"paths": ["lib"]})["proposal"]
    assert plan["status"] == "complete", plan
    (repo / "lib/shapes.py").write_text(FILES["lib/shapes.py"] + "\nX = os.sep\n")
    before = snapshot_tree(repo)
    refused = _apply(process, plan["proposalId"])
    assert refused["applied"] is False and refused["refusal"]["reason"] == "conflict"
    assert refused["refusal"]["conflicts"][0]["path"] == "lib/shapes.py"
    assert snapshot_tree(repo) == before
    # a plan bound to the dirty work tree, then any later write: the baseline itself is stale
    plan = _plan(process, "rename", {"symbol": "area", "newName": "disc_area"})["proposal"]
    assert "dirty" in plan["baseline"]
    (repo / "notes.txt").write_text("written after the plan\n")
    before = snapshot_tree(repo)
    refused = _apply(process, plan["proposalId"])
    assert refused["refusal"]["reason"] == "stale-baseline", refused["refusal"]
    assert snapshot_tree(repo) == before


@pytest.mark.needs_definitions
def test_rename_refusals_are_plans_that_never_apply(host: tuple[HostProcess, Path]) -> None:
    process, repo = host
    before = snapshot_tree(repo)
    collision = _plan(process, "rename", {"symbol": "area", "newName": "math"})["proposal"]
    assert collision["status"] == "error" and "already bound" in collision["refusal"]["detail"]
    unknown = _plan(process, "rename", {"symbol": "nope", "newName": "x"})["proposal"]
    assert unknown["status"] == "incomplete"
    assert unknown["incomplete"]["reason"] == "unresolved-reference"
    for plan in (collision, unknown):
        result = _apply(process, plan["proposalId"])
        assert result["applied"] is False and result["refusal"]["reason"] == "unsupported"
    assert snapshot_tree(repo) == before


@pytest.mark.needs_definitions
def test_a_finding_already_in_a_touched_file_does_not_refuse_the_apply(tmp_path: Path) -> None:
    """The after-state is judged on what the edit brings: rich's console.py calls IPython's
    injected `get_ipython`, an undefined name to the check, and that refused every rename
    touching the file. The whole change at `gate` still reports it."""
    files = dict(FILES)
    files["lib/shapes.py"] += "\n\ndef shell():\n    return get_ipython()\n"
    repo = make_repo(tmp_path / "repo", files)
    process = HostProcess(repo, None).start()
    try:
        plan = _plan(process, "rename", {"symbol": "lib.shapes.area", "newName": "disc_area"})
        assert plan["proposal"]["status"] == "complete", plan["proposal"]
        expected = _expected(repo, plan["proposal"])
        applied = _apply(process, plan["proposal"]["proposalId"])
        assert applied["applied"] is True, applied.get("refusal")
        assert applied["decision"]["decision"] == "allow"
        assert snapshot_tree(repo) == expected
        change = process.call("host/workingChangeset", {})["changeset"]
        whole = process.call(
            "host/evaluateChangeset", {"callSite": "gate", "changeset": change}, timeout=60
        )
        assert whole["decision"] == "deny"
        messages = [f["diagnostic"]["message"] for f in whole["findings"]]
        assert any("get_ipython" in m for m in messages), messages
    finally:
        assert process.stop() == 0
