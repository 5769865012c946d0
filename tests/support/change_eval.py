"""One evaluation of a work tree's change through a real host: a git repository made from
*files*, *edits* applied to its work tree, then `host/workingChangeset` and
`host/evaluateChangeset` at call-site `gate` in a fresh `asp-host serve` subprocess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.gitrepo import git, make_repo, write_files
from tests.support.host_harness import HostProcess


def evaluate_edit(
    root: Path,
    files: dict[str, str],
    edits: dict[str, str | None],
    comparison: str | None = "introduced",
) -> dict[str, Any]:
    """The host's decision on *edits* (path -> new text, None: delete) to a repository of *files*;
    *comparison* None leaves it to the host's default (`all`)."""
    repo = make_repo(root / "repo", dict(files))
    for path, text in edits.items():
        if text is None:
            (repo / path).unlink()
        else:
            write_files(repo, {path: text})
    git(repo, "add", "-A")
    host = HostProcess(repo, None).start()
    try:
        change = host.call("host/workingChangeset", {})["changeset"]
        params: dict[str, Any] = {"callSite": "gate", "changeset": change}
        if comparison:
            params["comparison"] = comparison
        result: dict[str, Any] = host.call("host/evaluateChangeset", params, timeout=60)
        return result
    finally:
        assert host.stop() == 0


def findings_of(result: dict[str, Any], code: str) -> list[tuple[str, int, str]]:
    """(path, zero-based line, message) of the result's findings with *code*, sorted."""
    return sorted(
        (
            f["diagnostic"]["location"]["path"],
            f["diagnostic"]["location"]["range"]["start"]["line"],
            f["diagnostic"]["message"],
        )
        for f in result["findings"]
        if f["diagnostic"]["code"] == code
    )
