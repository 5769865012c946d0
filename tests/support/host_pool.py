"""A host under test (workspace + trusted dir + process) and a per-module pool of them.

Equal `HostConfig`s share one host process within a test module (start-up cost); any test whose
scenario changes host state (crash counters, quarantine, closed pipes) asks for a fresh one, which
is stopped when that test ends. Every work tree is compared byte for byte with what the harness
itself wrote, after every evaluation and when the host stops: the host must never write.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from asp_protocol.canonical import blob_id
from tests.support.gitrepo import GIT_ENV, snapshot_tree
from tests.support.host_checks import (
    check_authority_status,
    check_capabilities,
    check_envelope,
    check_status,
)
from tests.support.host_harness import HostProcess
from tests.support.host_scenarios import HostConfig, prepare


def head_bytes(repo: Path, path: str) -> bytes | None:
    """The committed bytes of *path* at HEAD, or None when HEAD has no such file."""
    done = subprocess.run(
        ["git", "cat-file", "blob", f"HEAD:{path}"], cwd=repo, capture_output=True, env=GIT_ENV
    )
    return done.stdout if done.returncode == 0 else None


def head_tree(repo: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD^{tree}"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


class HostUnderTest:
    """A prepared workspace and the real host serving it, with outer-seam helpers that self-check."""

    def __init__(self, root: Path, config: HostConfig) -> None:
        self.config = config
        self.repo, self.trusted_dir, self.policy = prepare(root, config)
        self._expected = snapshot_tree(self.repo)
        self._rev: str | None = None
        self.host = HostProcess(self.repo, self.trusted_dir, assurance=config.assurance).start()

    # -- outer seam -------------------------------------------------------------------------

    def call(self, method: str, params: Any = None, **kwargs: Any) -> Any:
        return self.host.call(method, params, **kwargs)

    def status(self) -> dict[str, Any]:
        result = self.call("host/status", {})
        check_status(result)
        return result

    def capabilities(self) -> dict[str, Any]:
        result = self.call("host/capabilities", {})
        check_capabilities(result)
        return result

    def authority_status(self) -> dict[str, Any]:
        result = self.call("host/authority/status", {})
        check_authority_status(result)
        return result

    def baseline(self) -> dict[str, str]:
        """The host-issued committed snapshot `{rev}` (changes relative to HEAD, docs/architecture.md#wire-and-digests)."""
        if self._rev is None:
            self._rev = self.status()["workspace"]["baseline"]["rev"]
        return {"rev": self._rev}

    def evaluate(
        self,
        call_site: str,
        changeset: dict[str, Any],
        *,
        progress: list[Any] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        params = {"callSite": call_site, "changeset": changeset, **extra}
        timeout = extra.get("timeoutMs", 0) / 1000 + 30
        result = self.call("host/evaluateChangeset", params, timeout=timeout, progress=progress)
        check_envelope(result, call_site=call_site, params=params)
        self.verify_tree()
        return result

    # -- real file edits --------------------------------------------------------------------

    def edit(self, files: Mapping[str, str | bytes | None]) -> list[dict[str, Any]]:
        """Write (or delete, for None) work-tree files and return their ChangeSet changes vs HEAD."""
        changes: list[dict[str, Any]] = []
        for rel, content in files.items():
            before = head_bytes(self.repo, rel)
            path = self.repo / rel
            if content is None:
                path.unlink(missing_ok=True)
                assert before is not None, f"cannot delete {rel}: not in HEAD"
                changes.append({"path": rel, "kind": "delete", "before": blob_id(before)})
                continue
            data = content.encode() if isinstance(content, str) else content
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if before is None:
                changes.append({"path": rel, "kind": "create", "after": blob_id(data)})
            else:
                changes.append(
                    {
                        "path": rel,
                        "kind": "modify",
                        "before": blob_id(before),
                        "after": blob_id(data),
                    }
                )
        self._expected = snapshot_tree(self.repo)
        return changes

    def changeset(self, files: Mapping[str, str | bytes | None]) -> dict[str, Any]:
        return {"baseline": self.baseline(), "changes": self.edit(files)}

    def expect_current_tree(self) -> None:
        """Accept the work tree as it is now (after a successful host/applyProposal wrote it)."""
        self._expected = snapshot_tree(self.repo)

    def verify_tree(self) -> None:
        assert snapshot_tree(self.repo) == self._expected, "the host changed the work tree"

    def stop(self) -> int | None:
        """Close the host's stdin; a conforming host exits 0 without being killed."""
        code = self.host.stop()
        self.verify_tree()
        return code


class HostPool:
    """Hosts for one test module: shared by config, or fresh for one test."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._shared: dict[HostConfig, HostUnderTest] = {}
        self._fresh: list[HostUnderTest] = []
        self._count = 0

    def get(self, config: HostConfig, *, fresh: bool = False) -> HostUnderTest:
        if not fresh and config in self._shared:
            return self._shared[config]
        self._count += 1
        hut = HostUnderTest(self._root / f"h{self._count}", config)
        if fresh:
            self._fresh.append(hut)
        else:
            self._shared[config] = hut
        return hut

    def end_test(self) -> None:
        fresh, self._fresh = self._fresh, []
        codes = {hut.repo.parent.name: hut.stop() for hut in fresh}
        assert all(code == 0 for code in codes.values()), f"unclean host exits: {codes}"

    def close(self) -> None:
        self.end_test()
        shared, self._shared = list(self._shared.values()), {}
        codes = {hut.repo.parent.name: hut.stop() for hut in shared}
        assert all(code == 0 for code in codes.values()), f"unclean host exits: {codes}"
