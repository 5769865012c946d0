"""A symbolic link to a module is checked as the module it points to (real host, real git).

git keeps a link as a blob holding its target path, and the ChangeSet carries that blob: before,
the check read `alias.py -> real.py` as the Python source `real.py` and denied every change that
made or moved a link (`undefined name 'real'`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from reference_host.providers.check_links import link_target, outside_link
from tests.support.gitrepo import git, make_repo
from tests.support.host_harness import HostProcess

CLEAN = "def area(r):\n    return 3 * r * r\n"


def _evaluate(repo: Path, **extra: Any) -> dict[str, Any]:
    host = HostProcess(repo, None).start()
    try:
        change = host.call("host/workingChangeset", {})["changeset"]
        params = {"callSite": "gate", "changeset": change, **extra}
        result: dict[str, Any] = host.call("host/evaluateChangeset", params, timeout=60)
        return result
    finally:
        assert host.stop() == 0


def _messages(result: dict[str, Any]) -> list[tuple[str, str]]:
    found = [
        (f["diagnostic"]["location"]["path"], f["diagnostic"]["message"])
        for f in result["findings"]
    ]
    return sorted(found)


def test_a_new_link_to_a_clean_module_is_allowed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/real.py": CLEAN, "pkg/__init__.py": ""})
    os.symlink("real.py", repo / "pkg/alias.py")
    os.symlink("pkg/real.py", repo / "top.py")
    (repo / "sub").mkdir()
    os.symlink("../pkg/real.py", repo / "sub/deep.py")
    result = _evaluate(repo)
    assert result["decision"] == "allow", _messages(result)


def test_a_link_is_judged_by_its_target_in_the_same_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"real.py": CLEAN})
    os.symlink("real.py", repo / "alias.py")
    (repo / "real.py").write_text(CLEAN + "\n\ndef broken():\n    return oops\n")
    result = _evaluate(repo)
    assert result["decision"] == "deny"
    assert _messages(result) == [
        ("alias.py", "undefined name 'oops'"),
        ("real.py", "undefined name 'oops'"),
    ]


def test_a_link_moved_to_a_broken_module_introduces_its_findings(tmp_path: Path) -> None:
    files = {"good.py": CLEAN, "bad.py": "X = missing\n"}
    repo = make_repo(tmp_path / "repo", files, commit=False)
    os.symlink("good.py", repo / "alias.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "link")
    (repo / "alias.py").unlink()
    os.symlink("bad.py", repo / "alias.py")
    result = _evaluate(repo, comparison="introduced")
    assert result["decision"] == "deny"
    assert _messages(result) == [("alias.py", "undefined name 'missing'")]


def test_only_a_blob_shaped_like_a_link_is_read_as_one() -> None:
    assert link_target("pkg/alias.py", b"real.py") == "pkg/real.py"
    assert link_target("pkg/alias.py", b"../top.py") == "top.py"
    for data in (b"real.py\n", b"/etc/passwd", b"../../out.py", b"", b"a\0b", b" a.py"):
        assert link_target("pkg/alias.py", data) is None, data
    assert link_target("alias.py", b"alias.py") is None, "a link to itself"
    assert outside_link("pkg/alias.py", b"../../out.py") == "../../out.py"
    assert outside_link("pkg/alias.py", b"/usr/lib/x.py") == "/usr/lib/x.py"
    assert outside_link("pkg/alias.py", b"../top.py") is None
    assert outside_link("pkg/alias.py", b"x = 1\n") is None


@pytest.mark.parametrize("content", ["real.py", "X = 1"])
def test_a_one_line_file_naming_no_file_of_the_tree_is_analysed_as_it_is(
    tmp_path: Path, content: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"real.py": CLEAN})
    (repo / "other.py").write_text(content.replace("real.py", "nothere.py"))
    result = _evaluate(repo)
    if content == "X = 1":
        assert result["decision"] == "allow"
    else:
        assert _messages(result) == [("other.py", "undefined name 'nothere'")]


def test_a_link_out_of_the_workspace_is_not_checked_never_a_deny_on_its_text(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"real.py": CLEAN})
    outside = tmp_path / "elsewhere.py"
    outside.write_text(CLEAN)
    os.symlink("../elsewhere.py", repo / "near.py")
    os.symlink(str(outside), repo / "far.py")
    result = _evaluate(repo)
    assert result["decision"] == "indeterminate", result["coverage"]
    assert result["findings"] == [], "no syntax error about a link's text"
    details = " ".join(d.get("detail", "") for d in result["coverage"]["degraded"])
    assert "a symbolic link out of the workspace" in details, result["coverage"]["degraded"]
    assert "far.py" in details and "near.py" in details
