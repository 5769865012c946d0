"""The shipped samples in config/: schema-valid, and a real host runs on them as documented."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.definitions import assert_valid
from tests.support.gitrepo import git, make_repo, write_files
from tests.support.host_harness import HostProcess

SAMPLES = Path(__file__).resolve().parents[2] / "config" / "samples"
POLICY = SAMPLES / "asp.json"
MANIFEST = SAMPLES / "trusted" / "sample-check" / "asp-server.json"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.needs_definitions
def test_samples_are_valid_against_the_official_schemas() -> None:
    assert_valid(_load(POLICY), "asp-config.schema.json")
    assert_valid(_load(MANIFEST), "server-manifest.schema.json")


def test_the_sample_pins_match_the_sample_manifest() -> None:
    pin = _load(POLICY)["requirements"][0]["authority"]["providers"][0]
    manifest = _load(MANIFEST)
    assert pin["id"] == manifest["server"]["id"]
    assert pin["version"] == manifest["server"]["version"]
    assert pin["identity"] == manifest["provenance"]["publisher"]
    assert pin["integrity"] == manifest["artifact"]["fingerprint"]
    assert pin["conformance"] in manifest["capabilityProfiles"]


def test_a_host_on_the_samples_grants_authority_and_allows_a_clean_change(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {".asp/asp.json": POLICY.read_text(), "src/app.py": "VALUE = 1\n"},
    )
    trusted = tmp_path / "trusted" / "sample-check"
    trusted.mkdir(parents=True)
    manifest = _load(MANIFEST)
    manifest["entrypoint"]["bin"] = sys.executable  # as the samples README tells a user to do
    (trusted / "asp-server.json").write_text(json.dumps(manifest))
    write_files(repo, {"src/app.py": "VALUE = 2\n"})
    host = HostProcess(repo, trusted.parent).start()
    try:
        status = host.call("host/status")
        assert status["policy"]["source"] == ".asp/asp.json"
        assert status["policy"]["activation"] == "active"
        server = next(s for s in status["servers"] if s["id"] == "sample-check")
        assert server["authorityEvidence"]["authority"]["granted"] is True
        policy = host.call("host/policy")
        assert policy["policy"]["adapters"]["mcp"]["mode"] == "inspect-status-only"
        working = host.call("host/workingChangeset")
        decision = host.call(
            "host/evaluateChangeset",
            {"callSite": "interactive", "changeset": working["changeset"]},
        )
        assert decision["decision"] == "allow", decision["coverage"]
        assert decision["coverage"]["ran"] == ["sample-check"]
    finally:
        assert host.stop() == 0
    assert git(repo, "status", "--porcelain").strip() == "M src/app.py"
