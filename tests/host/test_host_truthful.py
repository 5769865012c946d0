"""No allow for work the host did not see (docs/workspace-git.md, evaluate/path_coverage.py).

Real host subprocesses with the built-in default policy (the Python check, required at every
call-site) on: a folder outside git, a repository git refuses (owned by another uid), a
repository with git missing from PATH, and changes to files the Python check cannot analyse.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from tests.support.definitions import assert_valid
from tests.support.gitrepo import git, make_repo, write_files
from tests.support.host_checks import check_envelope, check_status
from tests.support.host_harness import HostProcess

SITES = ("interactive", "gate", "sweep")
BROKEN = "def f():\n    return undefined_name\n"


def _isolated(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No user or system git config, so nothing (e.g. a global safe.directory) masks the case."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", **extra}


def _evaluate(host: HostProcess, call_site: str, changeset: dict[str, Any]) -> dict[str, Any]:
    params = {"callSite": call_site, "changeset": changeset}
    result = host.call("host/evaluateChangeset", params, timeout=60)
    check_envelope(result, call_site=call_site, params=params)
    return result


def _create(host: HostProcess, baseline: dict[str, Any], files: dict[str, str]) -> dict[str, Any]:
    """A ChangeSet creating *files*, their bytes uploaded with host/putBlob."""
    changes = [
        {
            "path": path,
            "kind": "create",
            "after": host.call("host/putBlob", {"bytes": text})["blobId"],
        }
        for path, text in files.items()
    ]
    return {"baseline": baseline, "changes": changes}


def _assert_unusable_everywhere(host: HostProcess, needle: str) -> None:
    status = host.call("host/status", {})
    check_status(status)
    assert status["host"]["state"] == "degraded"
    assert needle in status["workspace"]["staleReason"], status["workspace"]
    assert "unavailable" in [d["reason"] for d in status["receipt"]["coverage"]["degraded"]]
    with pytest.raises(AspError) as raised:
        host.call("host/workingChangeset", {})
    assert needle in (raised.value.detail or ""), raised.value
    baseline = status["workspace"]["baseline"]
    for site in SITES:
        result = _evaluate(host, site, _create(host, baseline, {"a.py": BROKEN}))
        assert result["decision"] == "indeterminate", site
        [entry, *_] = [d for d in result["coverage"]["degraded"] if d["reason"] == "unavailable"]
        assert needle in entry["detail"] and entry["source"] == "git"
    inspect = host.call(
        "host/queryInspect",
        {"callSite": "interactive", "request": {"verb": "symbols", "path": "a.py"}},
        timeout=60,
    )
    assert_valid(inspect, "outer-host.schema.json#/$defs/queryInspectResult")
    assert inspect["coverage"]["exhaustive"] is False
    assert any(
        d["reason"] == "unavailable" and needle in d["detail"]
        for d in inspect["coverage"]["degraded"]
    ), inspect["coverage"]


def test_outside_version_control_there_is_no_working_changeset(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    write_files(folder, {"a.py": BROKEN})
    host = HostProcess(folder, env=_isolated(tmp_path)).start()
    try:
        status = host.call("host/status", {})
        check_status(status)
        with pytest.raises(AspError) as raised:
            host.call("host/workingChangeset", {"paths": ["a.py"]})
        assert "no version control: pass the change inline" in raised.value.message
        baseline = status["workspace"]["baseline"]
        inline = _create(host, baseline, {"b.py": BROKEN})
        result = _evaluate(host, "gate", inline)
        assert result["decision"] == "deny", "an inline change is still really checked"
    finally:
        assert host.stop() == 0


@pytest.mark.needs_definitions
def test_a_repository_owned_by_another_uid_is_never_a_plain_directory(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to chown the repository to another uid")
    repo = make_repo(tmp_path / "theirs", {"a.py": "A = 1\n"})
    write_files(repo, {"a.py": BROKEN})
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 4242, 4242)
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        _assert_unusable_everywhere(host, "dubious ownership")
    finally:
        assert host.stop() == 0
    assert not (tmp_path / "home" / ".gitconfig").exists(), "the host never sets safe.directory"


@pytest.mark.needs_definitions
def test_git_missing_from_path_is_reported_not_downgraded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    env = _isolated(tmp_path, PATH=f"{empty}{os.pathsep}{Path(sys.executable).parent}")
    if any((Path(d) / "git").exists() for d in env["PATH"].split(os.pathsep)):
        pytest.skip("git lives next to the Python interpreter here")
    host = HostProcess(repo, env=env).start()
    try:
        _assert_unusable_everywhere(host, "git cannot be run")
    finally:
        assert host.stop() == 0


def test_changed_files_no_required_provider_analyses_are_listed_and_never_allowed(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "web/a.ts": "export const a = 1;\n"})
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        baseline = host.call("host/status", {})["workspace"]["baseline"]
        ts = {
            "baseline": baseline,
            "changes": [
                {
                    "path": "web/a.ts",
                    "kind": "modify",
                    "before": blob_id(b"export const a = 1;\n"),
                    "after": host.call(
                        "host/putBlob", {"bytes": "export const a: number = 'x' +;\n"}
                    )["blobId"],
                }
            ],
        }
        for site in SITES:
            result = _evaluate(host, site, ts)
            assert result["decision"] == "indeterminate", (site, result["coverage"])
            assert result["coverage"]["exhaustive"] is False
            listed = [d for d in result["coverage"]["degraded"] if d["source"] == "web/a.ts"]
            assert listed and listed[0]["reason"] == "unsupported", result["coverage"]
        mixed = _create(host, baseline, {"b.py": "B = 1\n", "docs/notes.md": "# notes\n"})
        result = _evaluate(host, "gate", mixed)
        sources = {d["source"] for d in result["coverage"]["degraded"]}
        assert "docs/notes.md" in sources and "b.py" not in sources, result["coverage"]
        assert result["decision"] == "indeterminate", "docs count like code: allow means checked"
        empty = _evaluate(host, "gate", {"baseline": baseline, "changes": []})
        assert empty["decision"] == "allow" and empty["coverage"]["exhaustive"] is True
        python = _create(host, baseline, {"c.py": "C = 1\n"})
        clean = _evaluate(host, "gate", python)
        assert clean["decision"] == "allow" and clean["coverage"]["degraded"] == []
    finally:
        assert host.stop() == 0


def test_a_partial_assessment_keeps_its_findings_on_the_files_it_analysed(tmp_path: Path) -> None:
    """A Python error beside a Markdown file: the check analyses the Python file, says it could
    not read the other, and its finding is in the result (advisory: a partial Assessment does not
    gate) — never dropped with the path nobody read, which left an agent with `indeterminate` and
    no word of the error."""
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        baseline = host.call("host/status", {})["workspace"]["baseline"]
        alone = _evaluate(host, "gate", _create(host, baseline, {"b.py": BROKEN}))
        assert alone["decision"] == "deny"
        [gating] = alone["findings"]
        assert gating["disposition"] == "gating"
        for site in SITES:
            mixed = _create(host, baseline, {"b.py": BROKEN, "docs/notes.md": "# notes\n"})
            result = _evaluate(host, site, mixed)
            assert result["decision"] == "indeterminate", (site, result["coverage"])
            [finding] = result["findings"]
            assert finding["diagnostic"]["code"] == "python/undefined-name"
            assert finding["diagnostic"]["location"]["path"] == "b.py"
            assert (
                finding["disposition"] == "advisory" and "did not count" in finding["severityNote"]
            )
            reasons = {d["source"]: d["reason"] for d in result["coverage"]["degraded"]}
            assert reasons["docs/notes.md"] == "unsupported"
            assert "blocking-diagnostic" not in reasons.values()
    finally:
        assert host.stop() == 0


def test_a_moved_submodule_makes_the_working_change_incomplete_never_allowed(
    tmp_path: Path,
) -> None:
    """A submodule checked out at another commit is a change of this repository that no
    ChangeSet can carry: named in the working changeset, and its evaluation is not allow."""
    sub = make_repo(tmp_path / "sub", {"s.py": "S = 1\n"})
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(repo, "commit", "-q", "-m", "submodule")
    (repo / "sub" / "s.py").write_text(BROKEN)
    git(repo / "sub", "commit", "-q", "-am", "moved")
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        working = host.call("host/workingChangeset", {})
        assert working["changeset"]["changes"] == []
        [entry] = working["uncarried"]
        assert entry["path"] == "sub" and "submodule" in entry["reason"]
        for site in SITES:
            result = _evaluate(host, site, working["changeset"])
            assert result["decision"] == "indeterminate", (site, result["coverage"])
            assert any("sub: a submodule" in d["detail"] for d in result["coverage"]["degraded"])
    finally:
        assert host.stop() == 0


def test_an_untracked_nested_repository_makes_the_working_change_incomplete(
    tmp_path: Path,
) -> None:
    """A directory holding its own `.git` is another repository: git does not enter it, so its
    files are in no ChangeSet. It is named as such (not as a bad file name), never allowed."""
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    make_repo(repo / "vendor" / "lib", {"n.py": BROKEN})
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        working = host.call("host/workingChangeset", {})
        assert working["changeset"]["changes"] == []
        [entry] = working["uncarried"]
        assert entry["path"] == "vendor/lib/"
        assert "git repository of its own" in entry["reason"], entry
        for site in SITES:
            result = _evaluate(host, site, working["changeset"])
            assert result["decision"] == "indeterminate", (site, result["coverage"])
    finally:
        assert host.stop() == 0


def test_a_file_untracked_with_rm_cached_is_compared_with_head(tmp_path: Path) -> None:
    """`git rm --cached` leaves the file on disk, untracked: its edit against HEAD is a modify
    (before: HEAD's blob) that the check reads; before, it was a create the baseline refused
    (stale-baseline), so the broken file went unchecked."""
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "same.py": "S = 1\n"})
    git(repo, "rm", "-q", "--cached", "a.py", "same.py")
    (repo / "a.py").write_text(BROKEN)
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        working = host.call("host/workingChangeset", {})["changeset"]
        [change] = working["changes"]
        assert change["path"] == "a.py" and change["kind"] == "modify" and "before" in change
        result = _evaluate(host, "gate", working)
        assert result["decision"] == "deny", result["coverage"]
        assert [f["diagnostic"]["location"]["path"] for f in result["findings"]] == ["a.py"]
    finally:
        assert host.stop() == 0


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this interpreter parses PEP 695")
def test_code_for_a_newer_python_is_indeterminate_never_a_syntax_error_deny(
    tmp_path: Path,
) -> None:
    """A Python 3.12 project's type alias, checked by a 3.11 check: not a syntax error, so not
    `deny`; not read either, so not `allow` (reference_host/providers/grammar.py)."""
    pyproject = '[project]\nname = "p"\nrequires-python = ">=3.12"\n'
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": pyproject, "a.py": "A = 1\n"})
    (repo / "a.py").write_text("type Pair[T] = tuple[T, T]\n")
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        working = host.call("host/workingChangeset", {})["changeset"]
        for site in SITES:
            result = _evaluate(host, site, working)
            assert result["decision"] == "indeterminate", (site, result["coverage"])
            assert result["findings"] == []
            details = " ".join(d["detail"] for d in result["coverage"]["degraded"])
            assert "written for Python 3.12 (requires-python in pyproject.toml)" in details
    finally:
        assert host.stop() == 0


def test_files_git_status_is_told_to_skip_are_read_by_the_host(tmp_path: Path) -> None:
    """`git update-index --assume-unchanged` / `--skip-worktree` hide an edit from `git status`;
    the host compares those files itself (reference_host/repo/gitindex.py). The flags are set
    between two statuses whose `git status` output is the same, so a host reusing its last
    reading would miss them."""
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": "C\n"})
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        assert "dirty" not in host.call("host/status", {})["workspace"]["baseline"]
        git(repo, "update-index", "--assume-unchanged", "a.py", "c.py")
        git(repo, "update-index", "--skip-worktree", "b.py")
        (repo / "a.py").write_text(BROKEN)
        (repo / "b.py").write_text(BROKEN.replace("f()", "g()"))
        (repo / "c.py").unlink()
        assert git(repo, "status", "--porcelain") == "", "git itself shows nothing"
        assert "dirty" in host.call("host/status", {})["workspace"]["baseline"]
        working = host.call("host/workingChangeset", {})["changeset"]
        kinds = {change["path"]: change["kind"] for change in working["changes"]}
        assert kinds == {"a.py": "modify", "b.py": "modify", "c.py": "delete"}
        result = _evaluate(host, "gate", working)
        assert result["decision"] == "deny"
        assert {f["diagnostic"]["location"]["path"] for f in result["findings"]} == {"a.py", "b.py"}
    finally:
        assert host.stop() == 0


def test_a_file_a_sparse_checkout_left_out_is_not_a_deletion(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "d/x.py": "X = 1\n"})
    git(repo, "sparse-checkout", "set", "--no-cone", "/a.py")
    assert not (repo / "d").exists()
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        assert "dirty" not in host.call("host/status", {})["workspace"]["baseline"]
        assert host.call("host/workingChangeset", {})["changeset"]["changes"] == []
    finally:
        assert host.stop() == 0


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.slow
def test_a_huge_file_keeps_the_host_small_and_is_never_allowed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    with open(repo / "big.bin", "wb") as handle:
        handle.truncate(512 * 1024**2)  # sparse; loading it whole would exceed the bound
    host = HostProcess(repo, env=_isolated(tmp_path)).start()
    try:
        status = host.call("host/status", {}, timeout=120)
        check_status(status)
        assert "dirty" in status["workspace"]["baseline"]
        working = host.call("host/workingChangeset", {}, timeout=120)
        [change] = working["changeset"]["changes"]
        assert change["path"] == "big.bin" and change["kind"] == "create"
        result = _evaluate(host, "gate", working["changeset"])
        assert result["decision"] == "indeterminate"
        [entry] = [d for d in result["coverage"]["degraded"] if d["source"] == "big.bin"][:1]
        assert "too large" in entry["detail"], result["coverage"]
        assert _peak_rss_mib(host.pid) < 200, "the host never holds the file"
    finally:
        assert host.stop() == 0
