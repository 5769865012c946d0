"""EDIT-HOST-* conformance (CONFORMANCE.md §5): host/requestEditPlan and host/applyProposal on the
real host process, with the scripted fake edit provider behind it, in temporary git repositories.

One test per requirement id; `support.edit_host` validates every plan and apply result against
the official schemas and compares the work tree byte for byte after each call.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from tests.support.edit_host import (
    EDIT_REQ,
    apply,
    edit_config,
    refused,
    rejected_plan,
    request_plan,
)
from tests.support.gitrepo import git
from tests.support.host_checks import assert_each_id_has_a_test
from tests.support.host_pool import HostPool

TESTS = Path(__file__).resolve().parents[1]
APP = "def add(a, b):\n    return a + b\n"


def test_edit_host_request_plan_no_write(pool: HostPool) -> None:
    hut = pool.get(edit_config())
    result = request_plan(hut)
    proposal = result["proposal"]
    assert proposal["status"] == "complete"
    assert proposal["provider"]["id"] == "edit-plan"
    assert proposal["baseline"] == hut.baseline()
    [touched] = proposal["touchedResources"]
    assert touched["path"] == "src/app.py"
    assert touched["precondition"]["expectedDigest"] == blob_id(APP.encode())
    edit = proposal["workspaceEdit"]["documentChanges"][0]["edits"][0]
    assert (
        edit["coordinateSystem"] == "utf16"
        and edit["rangeBasis"] == touched["precondition"]["expectedDigest"]
    )
    assert result["receipt"]["coverage"]["ran"] == [EDIT_REQ]
    assert (hut.repo / "src/app.py").read_text() == APP
    # a provider's decision/apply-receipt fields are never accepted into a plan
    smuggled = request_plan(pool.get(edit_config("host-fields")))
    rejected_plan(smuggled, "malformed")


def test_edit_host_positive_apply(pool: HostPool) -> None:
    hut = pool.get(edit_config(), fresh=True)
    plan = request_plan(hut, {"path": "src/app.py", "insert": "# applied by the host\n"})
    result = apply(hut, plan["proposal"]["proposalId"])
    assert result["applied"] is True
    assert (hut.repo / "src/app.py").read_text() == "# applied by the host\n" + APP
    assert result["assurance"] == {
        **result["assurance"],
        "mode": "advisory",
        "transactionGuarantee": "none",
    }
    assert result["decision"]["decision"] == "allow"
    assert result["baselineAfter"]["rev"] == result["baselineBefore"]["rev"]
    assert result["baselineAfter"]["dirty"], "the work tree now differs from HEAD"
    again = apply(hut, plan["proposal"]["proposalId"])
    refused(again, "stale-baseline")


def test_edit_host_stale_plan(pool: HostPool) -> None:
    # a plan whose validAsOf is not the host baseline is rejected before it can be cached
    stale = request_plan(pool.get(edit_config("stale")))
    rejected_plan(stale, "stale")
    refused(
        apply(pool.get(edit_config("stale")), stale["proposal"]["proposalId"]),
        "precondition-failed",
    )
    unread = request_plan(pool.get(edit_config("unread-blob")))
    rejected_plan(unread, "stale")
    # a plan made stale by a later commit is refused, the workspace untouched
    hut = pool.get(edit_config(), fresh=True)
    plan = request_plan(hut)
    (hut.repo / "docs/later.txt").write_text("a later write\n")
    git(hut.repo, "add", "-A")
    git(hut.repo, "commit", "-q", "-m", "later")
    hut.expect_current_tree()
    detail = refused(apply(hut, plan["proposal"]["proposalId"]), "stale-baseline")
    assert "no longer current" in detail["detail"]
    assert (hut.repo / "src/app.py").read_text() == APP


def test_edit_host_cas_conflict(pool: HostPool) -> None:
    hut = pool.get(edit_config(), fresh=True)
    plan = request_plan(hut)
    changed = "def add(a, b):\n    return b + a\n"
    hut.edit({"src/app.py": changed})
    refusal = refused(apply(hut, plan["proposal"]["proposalId"]), "conflict")
    [conflict] = refusal["conflicts"]
    assert conflict["path"] == "src/app.py"
    assert blob_id(changed.encode()) in conflict["detail"]
    assert (hut.repo / "src/app.py").read_text() == changed


def test_edit_host_path_policy(pool: HostPool) -> None:
    hut = pool.get(edit_config(), fresh=True)
    create = {"create": "src/created.py", "copyOf": "src/util.py"}
    # out-of-scope create: refused when planned, so it can never reach apply
    outside = request_plan(
        hut, {"create": "docs/created.py", "copyOf": "src/util.py"}, scope=["src"]
    )
    assert "outside the requested scope" in rejected_plan(outside, "malformed")["detail"]
    into_git = request_plan(hut, {"create": ".git/hooks/post-commit", "copyOf": "src/util.py"})
    assert "path policy" in rejected_plan(into_git, "malformed")["detail"]
    # expected absence: a path that appeared after the plan is not overwritten
    plan = request_plan(hut, create, scope=["src"])
    assert plan["proposal"]["touchedResources"][0]["precondition"] == {"expectedAbsence": True}
    hut.edit({"src/created.py": "X = 'mine'\n"})
    refusal = refused(apply(hut, plan["proposal"]["proposalId"]), "conflict")
    assert refusal["conflicts"][0]["path"] == "src/created.py"
    assert (hut.repo / "src/created.py").read_text() == "X = 'mine'\n"
    # a clean in-scope create applies
    plan = request_plan(hut, {"create": "src/other.py", "copyOf": "src/util.py"}, scope=["src"])
    assert apply(hut, plan["proposal"]["proposalId"])["applied"] is True
    assert (hut.repo / "src/other.py").read_bytes() == (hut.repo / "src/util.py").read_bytes()


def test_edit_host_unknown_proposal(pool: HostPool) -> None:
    hut = pool.get(edit_config())
    result = apply(hut, "proposal:never-issued-by-this-host")
    assert "unknown or uncached" in refused(result, "precondition-failed")["detail"]
    assert "decision" not in result, "refused before validation"


def _refused_by_validation(
    pool: HostPool, check: str, reason: str, decision: str
) -> dict[str, Any]:
    """Plan, then apply with the check provider behaving as *check*: refused for *reason* with
    that validation *decision* attached, and the work tree untouched."""
    hut = pool.get(edit_config(check=check), fresh=True)
    plan = request_plan(hut)
    result = apply(hut, plan["proposal"]["proposalId"])
    refused(result, reason)
    assert result["decision"]["decision"] == decision
    assert (hut.repo / "src/app.py").read_text() == APP
    return result


def test_edit_host_denied_validation(pool: HostPool) -> None:
    result = _refused_by_validation(pool, "finding", "validation-denied", "deny")
    reasons = {d["reason"] for d in result["decision"]["coverage"]["degraded"]}
    assert "blocking-diagnostic" in reasons
    assert "blocking-diagnostic" in {d["reason"] for d in result["receipt"]["failures"]}


def test_edit_host_indeterminate_validation(pool: HostPool) -> None:
    result = _refused_by_validation(pool, "incomplete", "validation-indeterminate", "indeterminate")
    assert "incomplete" in {d["reason"] for d in result["decision"]["coverage"]["degraded"]}


def test_edit_host_command_like_output(pool: HostPool) -> None:
    hut = pool.get(edit_config("command-like"))
    result = request_plan(hut)
    assert "command-like" in rejected_plan(result, "malformed")["detail"]
    assert not (hut.repo / "PWNED.txt").exists()
    refused(apply(hut, result["proposal"]["proposalId"]), "precondition-failed")
    assert not (hut.repo / "PWNED.txt").exists()


def test_edit_host_direct_write_risk(pool: HostPool) -> None:
    claimed = request_plan(pool.get(edit_config("direct-write")))
    rejected_plan(claimed, "direct-write-risk")
    asked = request_plan(pool.get(edit_config("requests-write")))
    assert "write access" in rejected_plan(asked, "direct-write-risk")["detail"]
    writable = request_plan(pool.get(edit_config("plan", write_paths=("workspace:**",))))
    assert "not launched" in rejected_plan(writable, "direct-write-risk")["detail"]


def test_edit_host_malformed_output(pool: HostPool) -> None:
    for behavior in ("malformed", "wrong-proposal-id"):
        hut = pool.get(edit_config(behavior))
        result = request_plan(hut)
        rejected_plan(result, "malformed")
        refused(apply(hut, result["proposal"]["proposalId"]), "precondition-failed")


def test_edit_host_host_field_smuggling(pool: HostPool) -> None:
    hut = pool.get(edit_config("host-fields"))
    result = request_plan(hut)
    entry = rejected_plan(result, "malformed")
    assert "host-owned" in entry["detail"] and "decision" in entry["detail"]
    text = str(result["proposal"])
    assert "forged-by-provider" not in text and "staged_snapshot" not in text, "values never pass"


def test_edit_host_missing_authority(pool: HostPool) -> None:
    unpinned = pool.get(edit_config(pinned=False))
    plan = request_plan(unpinned)
    assert plan["proposal"]["status"] == "complete", "an advisory provider may still propose"
    result = apply(unpinned, plan["proposal"]["proposalId"])
    assert "no edit requirement pins" in refused(result, "missing-authority")["detail"]
    assert result["receipt"]["authorityEvidence"] == []
    mispinned = pool.get(edit_config(pin=(("version", "9.9.9"),)))
    plan = request_plan(mispinned)
    result = apply(mispinned, plan["proposal"]["proposalId"])
    refused(result, "missing-authority")
    [evidence] = result["receipt"]["authorityEvidence"]
    assert evidence["authority"] == {
        **evidence["authority"],
        "granted": False,
        "requirement": EDIT_REQ,
    }


def test_edit_host_insufficient_assurance(pool: HostPool) -> None:
    hut = pool.get(edit_config(edit_assurance=("gated",)))
    plan = request_plan(hut)
    result = apply(hut, plan["proposal"]["proposalId"])
    assert "achieves advisory" in refused(result, "insufficient-assurance")["detail"]
    assert result["assurance"]["mode"] == "advisory"
    assert (hut.repo / "src/app.py").read_text() == APP


def test_edit_host_concurrent_apply(pool: HostPool) -> None:
    hut = pool.get(edit_config(), fresh=True)
    first = request_plan(hut, {"path": "src/app.py", "insert": "# first\n"})
    second = request_plan(hut, {"path": "src/app.py", "insert": "# second\n"})
    params = [
        {"callSite": "interactive", "proposalId": p["proposal"]["proposalId"], "intent": "agent"}
        for p in (first, second, first)
    ]
    futures = [hut.host.start_call("host/applyProposal", p, timeout=60) for p in params]
    results = [f.result(timeout=90) for f in futures]
    applied = [r for r in results if r["applied"]]
    assert len(applied) == 1, [r.get("refusal") for r in results]
    for result in results:
        if not result["applied"]:
            assert result["refusal"]["reason"] in ("conflict", "stale-baseline")
    text = (hut.repo / "src/app.py").read_text()
    assert text in ("# first\n" + APP, "# second\n" + APP)
    hut.expect_current_tree()


SCANNED = [
    TESTS / "conformance" / "test_edit_conformance.py",
    TESTS / "conformance" / "test_assurance_conformance.py",
    TESTS / "support" / "edit_host.py",
]
PRIVILEGED = re.compile(r"^(opcore|lattice|rox|crg|cix)(/|-asp-provider$|$)", re.IGNORECASE)
INNER_METHOD = re.compile(r"^(check|judge|edit|act|sense|inspect)/[A-Za-z]+$")


def test_edit_host_no_opcore_fast_path() -> None:
    """Token scan: the edit suites reach providers only through the host's outer methods."""
    present = [p for p in SCANNED if p.exists()]
    assert len(present) == len(SCANNED)
    for path in present:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                assert not any(n.startswith("reference_host") for n in names), path.name
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not PRIVILEGED.match(node.value), f"{path.name}: {node.value!r}"
                assert not INNER_METHOD.match(node.value), f"{path.name} names {node.value!r}"


@pytest.mark.needs_definitions
def test_every_edit_host_id_has_its_test() -> None:
    """Each EDIT-HOST-* id of CONFORMANCE.md has a test named for it here."""
    assert_each_id_has_a_test("EDIT-HOST", 16, globals())
