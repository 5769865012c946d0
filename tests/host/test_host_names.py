"""Any file name works (docs/workspace-git.md "File names"): no host method fails because of one.

Names that are not UTF-8, or that a ChangeSet cannot carry, in the work tree and in the committed
tree, through every method of a real host subprocess; results checked against the schemas.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.definitions import assert_valid
from tests.support.gitrepo import git, make_repo
from tests.support.host_checks import (
    check_authority_status,
    check_capabilities,
    check_envelope,
    check_status,
)
from tests.support.host_harness import HostProcess

ODD = ("new\nline.py", " lead space.py", "-dash.py", "tab\there.py", "ünïcödé.py", "q\"uote'.py")


@pytest.mark.needs_definitions
def test_odd_and_undecodable_names_never_fail_a_method(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", **{name: "X = 1\n" for name in ODD}})
    root = os.fsencode(repo)
    with open(os.path.join(root, b"committed-\xfe.py"), "wb") as handle:
        handle.write(b"C = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "an undecodable name in HEAD")
    with open(os.path.join(root, b"bad-\xff-name.py"), "wb") as handle:
        handle.write(b"B = 1\n")
    (repo / "back\\slash.py").write_text("S = 1\n")
    (repo / "new\nline.py").write_text("X = 2\n")
    host = HostProcess(repo).start()
    try:
        status = host.call("host/status", {})
        check_status(status)
        check_capabilities(host.call("host/capabilities", {}))
        check_authority_status(host.call("host/authority/status", {}))
        working = host.call("host/workingChangeset", {})
        paths = [c["path"] for c in working["changeset"]["changes"]]
        assert paths == ["new\nline.py"], "odd but valid names are carried as they are"
        uncarried = {u["path"]: u["reason"] for u in working["uncarried"]}
        assert set(uncarried) == {"bad-\\xff-name.py", "back\\slash.py"}, uncarried
        assert "not valid UTF-8" in uncarried["bad-\\xff-name.py"]
        params = {"callSite": "gate", "changeset": working["changeset"]}
        verdict = host.call("host/evaluateChangeset", params, timeout=60)
        check_envelope(verdict, call_site="gate", params=params)
        assert verdict["decision"] == "indeterminate", "paths left out were not evaluated"
        [entry] = [d for d in verdict["coverage"]["degraded"] if d["source"] == "workspace"]
        assert "2 work-tree path(s) not evaluated" in entry["detail"]
        committed = {"baseline": {"rev": status["workspace"]["baseline"]["rev"]}, "changes": []}
        params = {"callSite": "sweep", "changeset": committed}
        check_envelope(
            host.call("host/evaluateChangeset", params, timeout=60),
            call_site="sweep",
            params=params,
        )
        inspect = host.call(
            "host/queryInspect",
            {"callSite": "interactive", "request": {"verb": "symbols", "path": "a.py"}},
            timeout=60,
        )
        assert_valid(inspect, "outer-host.schema.json#/$defs/queryInspectResult")
    finally:
        assert host.stop() == 0


def _references_of_f(host: HostProcess) -> dict[str, object]:
    found: dict[str, object] = host.call(
        "host/queryInspect",
        {"callSite": "interactive", "request": {"verb": "references", "symbol": "a.f"}},
        timeout=60,
    )
    assert_valid(found, "outer-host.schema.json#/$defs/queryInspectResult")
    return found


@pytest.mark.needs_definitions
@pytest.mark.parametrize("where", ["committed", "work tree"])
def test_inspect_is_not_complete_over_a_file_left_out_for_its_name(
    tmp_path: Path, where: str
) -> None:
    """A file no ChangeSet can name is not in the snapshot a provider reads, so a whole-tree answer
    has not seen it: the answer says so (workspace `incomplete`, naming it) and is not exhaustive,
    while the same question on the same tree without it is."""
    repo = make_repo(
        tmp_path / "repo", {"a.py": "def f():\n    return 1\n", "b.py": "import a\na.f()\n"}
    )
    host = HostProcess(repo).start()
    try:
        clean = _references_of_f(host)
        assert clean["coverage"]["exhaustive"] is True  # type: ignore[index]
        with open(os.path.join(os.fsencode(repo), b"caf\xe9.py"), "wb") as handle:
            handle.write(b"import a\na.f()\n")
        if where == "committed":
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "a caller whose name is not UTF-8")
        found = _references_of_f(host)
    finally:
        assert host.stop() == 0
    coverage = found["coverage"]
    assert coverage["exhaustive"] is False  # type: ignore[index]
    [entry] = [d for d in coverage["degraded"] if d["source"] == "workspace"]  # type: ignore[index]
    assert entry["reason"] == "incomplete" and entry["capability"] == "inspect"
    assert (
        "1 file(s) not in the snapshot inspected: caf\\xe9.py: file name is not valid UTF-8"
        in (entry["detail"])
    )
