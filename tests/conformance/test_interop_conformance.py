"""INTEROP-*: the reference host and a minimal independent host, each with our fake provider in both
protocol eras (asp/1.0 and the recorded asp/0.1 dialect). The two Opcore ids need the real
third-party runtime and are not claimed here (docs/asp-0.1.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from reference_host.sessions.compat_v01 import LegacyProfile
from reference_host.sessions.session import CheckCapability
from tests.support import host_checks as checks
from tests.support.definitions import assert_valid, schema_errors
from tests.support.host_pool import HostPool
from tests.support.host_scenarios import REQ, one_provider
from tests.support.provider_host import provider_host, wait_exit

ROOT = Path(__file__).resolve().parents[2]
FAKE = "reference_host.providers.fake"
ASSESSMENT = "check-assessment.schema.json"
EDIT = {"src/app.py": "def add(a, b):\n    return a + b + 0\n"}
V1 = one_provider("clean")
V01 = one_provider(
    "clean",
    id="legacy-clean",
    protocol="asp/0.1",
    manifest_protocols=("asp/0.1",),
    settings=(("checks", ("fake.lines",)),),
)
V01_UNSELECTED = one_provider(
    "clean", id="legacy-unselected", protocol="asp/0.1", manifest_protocols=("asp/0.1",)
)


def _evaluate(pool: HostPool, config: Any, call_site: str = "gate") -> dict[str, Any]:
    hut = pool.get(config)
    return hut.evaluate(call_site, hut.changeset(EDIT))


# -- INTEROP-REF-HOST-FAKE -------------------------------------------------------------------


@pytest.mark.parametrize("config", [V1, V01], ids=["asp-1.0", "asp-0.1"])
def test_interop_ref_host_fake(pool: HostPool, config: Any) -> None:
    """Reference host and the fake check provider over stdio, ordinary provider contract."""
    result = _evaluate(pool, config)
    assert result["decision"] == "allow", result["coverage"]
    assert result["coverage"]["ran"] == [REQ] and result["coverage"]["exhaustive"] is True
    assert all(e["authority"]["granted"] for e in result["authorityEvidence"])
    provider = config.fakes()[0].pid
    status = pool.get(config).status()
    protocol = "asp/0.1" if config is V01 else "asp/1.0"
    assert f"check session negotiated {protocol}" in checks.server(status, provider)["detail"]


# -- INTEROP-UNSUPPORTED-COVERAGE-VISIBLE ----------------------------------------------------


def test_interop_unsupported_coverage_visible(pool: HostPool) -> None:
    """Unsupported or missing coverage is explicit and never counts as passing."""
    for config, reason, provider in (
        (V01_UNSELECTED, "unsupported", "legacy-unselected"),
        (one_provider("unsupported"), "unsupported", "fake-unsupported"),
        (one_provider("clean", id="fake-absent", installed=False), None, "fake-absent"),
    ):
        result = _evaluate(pool, config)
        assert result["decision"] == "indeterminate" and result["pass"] is False
        assert result["coverage"]["ran"] == [] and result["coverage"]["exhaustive"] is False
        assert result["receipt"]["failures"] == result["coverage"]["degraded"]
        if reason is None:
            assert checks.find_degraded(
                result, "missing-required-provider", checks.who(provider)
            ) or checks.find_degraded(result, "missing", checks.who(provider)), result["coverage"]
        else:
            checks.named(result, reason, provider)


# -- INTEROP-NO-OPCORE-FAST-PATH -------------------------------------------------------------

RUNNERS = [
    "reference_host/sessions/compat_v01.py",
    "reference_host/providers/fake_v01.py",
    "tests/support/provider_host.py",
    "tests/support/provider_probe.py",
    "tests/support/host_scenarios.py",
    "tests/bridge/test_bridge_v01.py",
    "tests/host/test_host_v01.py",
]
FAST_PATH = re.compile(r"opcore|old[-_]tool|guardrail|fast[-_]?path|lattice", re.IGNORECASE)


def test_interop_no_opcore_fast_path() -> None:
    """No interop runner, fixture or host module takes a privileged Opcore or old-tool path."""
    for relative in RUNNERS:
        text = (ROOT / relative).read_text(encoding="utf-8")
        assert not FAST_PATH.findall(text), f"{relative} names a privileged path"
    for path in sorted((ROOT / "reference_host").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "opcore" not in text.lower(), f"{path} special-cases one third-party provider"


# -- INTEROP-PRIVATE-CLAIMS ------------------------------------------------------------------

CLAIMS = re.compile(
    r"\b(certif\w*|approved|registry|stable[- ]api|public[- ]release|trusted by)\b", re.I
)


def test_interop_private_claims(pool: HostPool) -> None:
    """Interop results are private behaviour evidence: no trust or certification claims."""
    result = _evaluate(pool, V01)
    hut = pool.get(V01)
    for receipt, kind in (
        (result["receipt"], "evaluate"),
        (hut.status()["receipt"], "status"),
        (hut.authority_status()["receipt"], "authority-status"),
    ):
        checks.check_receipt(receipt, kind)
        assert receipt["privateOnly"] is True and receipt["trustArtifact"] is False
    texts = [
        result["assurance"].get("detail", ""),
        checks.server(hut.status(), "legacy-clean")["detail"],
    ]
    for text in texts:
        assert not CLAIMS.findall(text), text
    assert "not verifiable" in texts[0], "the mapped answer admits what it could not check"


# -- INTEROP-INDEPENDENT-HOST-FAKE -----------------------------------------------------------

FILES = {"src/app.py": "x = 1\n", "README.md": "hello\n"}


@pytest.mark.needs_definitions
@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["asp/1.0", "asp/0.1"])
async def test_interop_independent_host_fake(protocol: str) -> None:
    """A minimal independent host (tests/support/provider_host.py, not the reference host) drives
    the fake through initialize, the initialized grant, callbacks and Assessment validation."""
    async with provider_host(
        FAKE, "--behavior", "finding", "--protocol", protocol, files=FILES
    ) as host:
        result = await host.initialize(protocol)
        await host.initialized()
        params: dict[str, Any] = {
            "changeset": host.changeset({"src/app.py": "x = 2\n"}),
            "scope": "changeset",
            "comparison": "all",
        }
        if protocol == "asp/0.1":
            params.update(callSite="gate", checks=["fake.lines"])
            await host.endpoint.notify("workspace/baselineChanged", {"baseline": {"rev": "moved"}})
        raw = await host.evaluate(params)
        assert host.reads, "content came only through workspace/readBlob"
        if protocol == "asp/1.0":
            assert_valid(result, "initialize.schema.json#/$defs/result")
            assert_valid(raw, ASSESSMENT)
            return
        profile = LegacyProfile()
        CheckCapability.model_validate(profile.map_capability(result["capabilities"]["check"]))
        assert schema_errors(raw, ASSESSMENT), "the 0.1 answer is not v1 as sent"
        mapped, notes = profile.map_assessment(raw)
        assert_valid(mapped, ASSESSMENT)
        assert mapped["diagnostics"][0]["location"]["range"]["start"] == {"line": 0, "char": 0}
        assert any("durationMs" in n for n in notes) and any("outside v1" in n for n in notes)
        assert host.tree_calls[-1]["baseline"] == host.baseline, "baselineChanged was ignored"
        with pytest.raises(Exception) as refused:
            await host.endpoint.request("shutdown", None, timeout=5)
        assert getattr(refused.value, "code", None) == -32601
        assert host.process.stdin is not None
        await host.process.stdin.aclose()
        assert await wait_exit(host.process) == 0, "it ends when stdin closes"


LEFT_OUT: dict[str, str] = {
    "INTEROP-REF-HOST-OPCORE": "needs the real third-party provider runtime (node), not in CI",
    "INTEROP-INDEPENDENT-HOST-OPCORE": "needs the real third-party provider runtime (node), not in CI",
}


@pytest.mark.needs_definitions
def test_every_interop_id_has_its_test() -> None:
    """Each INTEROP-* id of CONFORMANCE.md has a test named for it here, or a stated reason."""
    checks.assert_each_id_has_a_test("INTEROP", 7, globals(), left_out=LEFT_OUT)
