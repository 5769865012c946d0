"""Edits inside a submodule are never evaluated as checked (reference_host/repo/submodules.py).

The host's `git status` does not enter submodules. Before, a working change whose only edit was
a file inside a submodule was an empty ChangeSet and its evaluation `allow`, about a file nobody
read. Real host subprocesses on real superprojects with real submodules; each evaluation goes
through the built-in default policy (the Python check, required at every call-site).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bridge.config import BridgeSettings
from reference_host.repo import submodules
from reference_host.repo.git import git_env
from tests.support.ext_bridge import extension_server
from tests.support.gitrepo import git, make_repo
from tests.support.host_checks import check_envelope
from tests.support.host_harness import HostProcess
from tests.support.mcp_helpers import assert_labelled

BROKEN = "def f():\n    return undefined_name\n"
SITES = ("interactive", "gate", "sweep")


def _isolated(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}


def _with_submodule(tmp_path: Path, name: str = "lib") -> Path:
    """A superproject with a clean, checked-out submodule at *name*."""
    sub = make_repo(tmp_path / f"{name}-origin", {"s.py": "S = 1\n", "pkg/t.py": "T = 2\n"})
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), name)
    git(repo, "commit", "-q", "-m", "submodule")
    return repo


def _working(repo: Path, tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The working changeset and one evaluation of it per call-site."""
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        working: dict[str, Any] = host.call("host/workingChangeset", {})
        results = []
        for site in SITES:
            params = {"callSite": site, "changeset": working["changeset"]}
            result = host.call("host/evaluateChangeset", params, timeout=60)
            check_envelope(result, call_site=site, params=params)
            results.append(result)
        return working, results
    finally:
        assert host.stop() == 0


def _assert_not_allowed(results: list[dict[str, Any]], needle: str) -> None:
    for result in results:
        assert result["decision"] == "indeterminate", result["coverage"]
        assert result["coverage"]["exhaustive"] is False
        details = [d["detail"] for d in result["coverage"]["degraded"]]
        assert any(needle in detail for detail in details), details


def test_a_clean_submodule_changes_nothing(tmp_path: Path) -> None:
    repo = _with_submodule(tmp_path)
    working, results = _working(repo, tmp_path)
    assert working["changeset"]["changes"] == [] and "uncarried" not in working
    assert [r["decision"] for r in results] == ["allow"] * len(SITES)


@pytest.mark.parametrize(
    "edit",
    ["modified", "untracked", "deleted", "staged"],
)
def test_an_edit_inside_a_submodule_is_named_and_never_allowed(tmp_path: Path, edit: str) -> None:
    repo = _with_submodule(tmp_path)
    inner = repo / "lib"
    if edit == "modified":
        (inner / "pkg" / "t.py").write_text(BROKEN)
    elif edit == "untracked":
        (inner / "new.py").write_text(BROKEN)
    elif edit == "deleted":
        (inner / "s.py").unlink()
    else:
        (inner / "s.py").write_text(BROKEN)
        git(inner, "add", "s.py")
    working, results = _working(repo, tmp_path)
    assert working["changeset"]["changes"] == []
    [entry] = working["uncarried"]
    assert entry["path"] == "lib"
    assert "1 path(s) changed inside it" in entry["reason"], entry
    _assert_not_allowed(results, "lib: 1 path(s) changed inside it")


def test_an_edit_beside_the_submodule_is_still_evaluated(tmp_path: Path) -> None:
    """The superproject's own change is carried and checked as before; the submodule's edit
    only keeps the decision from being `allow`."""
    repo = _with_submodule(tmp_path)
    (repo / "a.py").write_text(BROKEN)
    (repo / "lib" / "s.py").write_text("S = 3\n")
    working, results = _working(repo, tmp_path)
    assert [c["path"] for c in working["changeset"]["changes"]] == ["a.py"]
    for result in results:
        assert result["decision"] == "deny"
        assert any("undefined_name" in f["diagnostic"]["message"] for f in result["findings"])


def test_an_edit_hidden_by_the_submodules_own_index_flags_is_not_taken_as_clean(
    tmp_path: Path,
) -> None:
    """`--assume-unchanged` inside the submodule hides its edit from git status there too."""
    repo = _with_submodule(tmp_path)
    git(repo / "lib", "update-index", "--assume-unchanged", "s.py")
    (repo / "lib" / "s.py").write_text(BROKEN)
    working, results = _working(repo, tmp_path)
    [entry] = working["uncarried"]
    assert "its index tells git to skip" in entry["reason"], entry
    _assert_not_allowed(results, "lib: 1 file(s) its index tells git to skip")


def test_a_nested_submodules_edit_is_found(tmp_path: Path) -> None:
    inner_origin = make_repo(tmp_path / "inner-origin", {"i.py": "I = 1\n"})
    middle = make_repo(tmp_path / "middle-origin", {"m.py": "M = 1\n"})
    git(
        middle,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(inner_origin),
        "in",
    )
    git(middle, "commit", "-q", "-m", "nested")
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(middle), "mid")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "update", "--init", "--recursive")
    git(repo, "commit", "-q", "-m", "submodule")
    (repo / "mid" / "in" / "i.py").write_text(BROKEN)
    working, results = _working(repo, tmp_path)
    assert [e["path"] for e in working["uncarried"]] == ["mid/in"], working["uncarried"]
    _assert_not_allowed(results, "mid/in: 1 path(s) changed inside it")


def test_files_in_a_submodule_folder_that_is_not_checked_out_are_named(tmp_path: Path) -> None:
    repo = _with_submodule(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))  # submodules not initialised
    assert list((clone / "lib").iterdir()) == []
    (clone / "lib" / "x.py").write_text(BROKEN)
    working, results = _working(clone, tmp_path)
    [entry] = working["uncarried"]
    assert entry["path"] == "lib" and "not checked out" in entry["reason"], entry
    _assert_not_allowed(results, "lib: files in the folder of a submodule")


def test_the_submodules_own_filter_is_never_run(tmp_path: Path) -> None:
    """The submodule's configuration names a clean filter for its files; reading its status
    must not start it (the workspace's own driver reading does not cover the submodule's)."""
    repo = _with_submodule(tmp_path)
    inner = repo / "lib"
    (inner / ".gitattributes").write_text("*.py filter=evil\n")
    git(inner, "add", ".gitattributes")
    git(inner, "commit", "-q", "-m", "attributes")
    git(repo, "add", "lib")
    git(repo, "commit", "-q", "-m", "move")
    marker = tmp_path / "ran"
    git(inner, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(inner, "config", "filter.evil.required", "true")
    (inner / "s.py").write_text(BROKEN)  # stat-dirty: a status reading it would run the filter
    working, results = _working(repo, tmp_path)
    assert not marker.exists()
    assert [e["path"] for e in working["uncarried"]] == ["lib"]
    _assert_not_allowed(results, "lib: ")


def test_past_the_budget_submodules_are_reported_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process: with a budget of one, the second submodule is named as not read."""
    repo = _with_submodule(tmp_path)
    second = make_repo(tmp_path / "second-origin", {"z.py": "Z = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(second), "zz")
    git(repo, "commit", "-q", "-m", "second")
    monkeypatch.setattr(submodules, "MAX_SUBMODULES", 1)
    found = submodules.submodule_edits(repo, git_env(), frozenset({"lib", "zz"}), {})
    assert list(found) == ["zz"] and "more than 1 submodules" in found["zz"]


@pytest.mark.anyio
async def test_the_bridge_says_what_was_left_out_instead_of_nothing_to_do(tmp_path: Path) -> None:
    """Through the bridge (real MCP client session in memory, real host): the model is told the
    decision is not allow because of the submodule, and not that nothing is left to do."""
    repo = _with_submodule(tmp_path)
    (repo / "lib" / "s.py").write_text(BROKEN)
    server, _ = extension_server(BridgeSettings(repo=repo, timeout=60))
    async with Client(server) as client:
        result = await client.call_tool("asp_ext_evaluate_changeset", {})
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Host decision: indeterminate" in text and "lib: 1 path(s) changed inside it" in text
    reading = assert_labelled(result, binding="mcp-extension")["bridgeResult"]["evaluation"]
    assert reading["decision"] == "indeterminate" and reading["pathsChanged"] == 0
    assert not reading["nextStep"].startswith("Next step: none")
    assert "submodule" in reading["nextStep"]


def test_a_submodule_reached_through_a_link_out_of_the_workspace_is_not_read(
    tmp_path: Path,
) -> None:
    """In-process: `vendor` is a link to a folder outside, holding a repository at `vendor/lib`;
    git is never run out there, and the submodule is named as not read."""
    outside = make_repo(tmp_path / "outside" / "lib", {"o.py": BROKEN})
    (outside / "o.py").write_text("changed = 1\n")
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    (repo / "vendor").symlink_to(outside.parent, target_is_directory=True)
    found = submodules.submodule_edits(repo, git_env(), frozenset({"vendor/lib"}), {})
    assert list(found) == ["vendor/lib"] and "link out of the workspace" in found["vendor/lib"]
