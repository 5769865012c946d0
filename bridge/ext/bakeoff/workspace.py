"""Materialise a bake-off case: a temporary git repository, a trusted directory, and the ChangeSet.

The ChangeSet is built here from the files the case wrote (blob ids from the bytes, baseline from
the HEAD tree), not through a host's private helper, so any conforming host can be measured and
both bindings send byte-identical params.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asp_protocol.canonical import blob_id
from bridge.ext.bakeoff.spec import Case, build_manifest, build_policy

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "asp-bakeoff",
    "GIT_AUTHOR_EMAIL": "asp-bakeoff@example.invalid",
    "GIT_COMMITTER_NAME": "asp-bakeoff",
    "GIT_COMMITTER_EMAIL": "asp-bakeoff@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
STALE_MARKER = "# an older revision of this file\n"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_GIT_ENV, "HOME": str(repo)}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class PreparedCase:
    """Where a case lives on disk and the exact ChangeSet both bindings send."""

    case: Case
    repo: Path
    trusted_dir: Path
    head_tree: str
    stale_tree: str
    changeset: dict[str, Any]

    @property
    def baseline(self) -> dict[str, str]:
        """The committed snapshot the host accepts as a ChangeSet baseline (`{rev}` alone)."""
        return {"rev": f"git:tree:{self.head_tree}"}


def prepare(case: Case, root: Path, *, python: str) -> PreparedCase:
    """Write the case's repo (two commits: an older and the HEAD revision), trusted dir and change."""
    repo = root / "workspace"
    trusted = root / "trusted"
    repo.mkdir(parents=True)
    trusted.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")

    files = dict(case.files)
    policy = build_policy(case)
    if policy is not None:
        files[".asp/asp.json"] = json.dumps(policy, indent=2) + "\n"
    older = {rel: STALE_MARKER + text for rel, text in files.items() if rel.endswith(".py")}
    _write(repo, {**files, **older})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "older revision")
    stale_tree = _git(repo, "rev-parse", "HEAD^{tree}")
    _write(repo, files)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "baseline")
    head_tree = _git(repo, "rev-parse", "HEAD^{tree}")

    for provider in case.providers:
        target = trusted / provider.id / "asp-server.json"
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(build_manifest(provider, python), indent=2) + "\n")

    changes = _apply_change(repo, files, dict(case.change))
    rev = stale_tree if case.request.changeset == "stale" else head_tree
    changeset = {"baseline": {"rev": f"git:tree:{rev}"}, "changes": changes}
    return PreparedCase(case, repo, trusted, head_tree, stale_tree, changeset)


def restore(prepared: PreparedCase) -> None:
    """Put the case's work tree back as `prepare` left it (after a native apply wrote to it), so
    every binding run of an apply case starts from the same tree: HEAD plus the case's change."""
    _git(prepared.repo, "checkout", "-q", "--", ".")
    _git(prepared.repo, "clean", "-q", "-f", "-d")
    committed = {
        rel: (prepared.repo / rel).read_text(encoding="utf-8")
        for rel in prepared.case.change
        if (prepared.repo / rel).is_file()
    }
    _apply_change(prepared.repo, committed, dict(prepared.case.change))


def _apply_change(
    repo: Path, committed: dict[str, str], change: dict[str, str | None]
) -> list[dict[str, Any]]:
    """Edit the work tree and describe each edit as a content-addressed ChangeSet entry."""
    entries: list[dict[str, Any]] = []
    for rel in sorted(change):
        text = change[rel]
        before = committed.get(rel)
        path = repo / rel
        if text is None:
            if before is None:
                continue
            path.unlink()
            entries.append({"path": rel, "kind": "delete", "before": _blob(before)})
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if before is None:
            entries.append({"path": rel, "kind": "create", "after": _blob(text)})
        else:
            entries.append(
                {"path": rel, "kind": "modify", "before": _blob(before), "after": _blob(text)}
            )
    return entries


def _blob(text: str) -> str:
    return blob_id(text.encode("utf-8"))


def snapshot(repo: Path) -> dict[str, str]:
    """Blob id of every work-tree file outside `.git`, to prove nothing was written."""
    return {
        str(p.relative_to(repo)): blob_id(p.read_bytes())
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }
