"""HOSTILE-* conformance (CONFORMANCE.md §4): hostile fake providers behind the real host.

One test per requirement id that does not need the edit profile (HOSTILE-COMMAND-LIKE-EDIT-OUTPUT
does, and is left out until edit is built). Every case must end non-allow (except clean required
coverage beside a failing optional provider) with the failure machine-readable in
`coverage.degraded` and mirrored in the receipt's `failures` — `support.host_checks` verifies the
mirroring, schemas and digests on every result.
"""

from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from tests.support import host_checks as checks
from tests.support.edit_host import apply, edit_config, rejected_plan, request_plan
from tests.support.host_pool import HostPool
from tests.support.host_scenarios import REQ, Fake, HostConfig, Req, one_provider

TESTS = Path(__file__).resolve().parents[1]
OPT = "optional-check"


def gate_eval(pool: HostPool, config: HostConfig, path: str, **kw: Any) -> dict[str, Any]:
    hut = pool.get(config, fresh=kw.pop("fresh", False))
    return hut.evaluate(
        kw.pop("call_site", "gate"), hut.changeset({path: f"V = {len(path)}\n"}), **kw
    )


def assert_blocked(result: dict[str, Any], reason: str, provider: str) -> dict[str, Any]:
    """Non-allow, the reason visible for that requirement/provider, and it did not count as ran."""
    assert result["decision"] == "indeterminate", result["decision"]
    entry = checks.named(result, reason, provider)
    assert not checks.mentions(result["coverage"]["ran"], REQ), result["coverage"]
    return entry


# -- HOSTILE-MALFORMED-INITIALIZE ------------------------------------------------------------


def test_hostile_malformed_initialize(pool: HostPool) -> None:
    result = gate_eval(pool, one_provider("malformed-initialize"), "src/h_init.py")
    assert result["decision"] == "indeterminate"
    hits = checks.find_degraded(
        result, "malformed", checks.who("fake-malformed-initialize")
    ) or checks.find_degraded(result, "incompatible", checks.who("fake-malformed-initialize"))
    assert hits, result["coverage"]
    assert "fake-malformed-initialize" not in checks.provenance_ids(result)


# -- HOSTILE-MALFORMED-ASSESSMENT ------------------------------------------------------------


def test_hostile_malformed_assessment(pool: HostPool) -> None:
    result = gate_eval(pool, one_provider("malformed"), "src/h_malformed.py")
    assert_blocked(result, "malformed", "fake-malformed")
    assert result["findings"] == []


# -- HOSTILE-FORGED-HOST-FIELDS --------------------------------------------------------------


@pytest.mark.parametrize("behavior", ["forged-top-level", "forged-nested"])
def test_hostile_forged_host_fields(pool: HostPool, behavior: str) -> None:
    result = gate_eval(pool, one_provider(behavior), f"src/h_{behavior}.py")
    assert_blocked(result, "malformed", f"fake-{behavior}")
    assert result["pass"] is False
    text = json.dumps(result)
    assert '"applyReceipt"' not in text and '"verdict"' not in text, "forged fields leaked"


# -- HOSTILE-STALE-ASSESSMENT ----------------------------------------------------------------


@pytest.mark.parametrize("behavior", ["stale-baseline", "wrong-changeset-digest", "unread-blob"])
def test_hostile_stale_assessment(pool: HostPool, behavior: str) -> None:
    result = gate_eval(pool, one_provider(behavior), f"src/h_{behavior}.py")
    assert result["decision"] == "indeterminate"
    stale = checks.find_degraded(result, "stale", {f"fake-{behavior}"})
    if behavior == "unread-blob":
        stale = stale or checks.find_degraded(result, "malformed", {f"fake-{behavior}"})
    assert stale, result["coverage"]
    assert stale[0].get("requirement") == REQ
    assert not checks.mentions(result["coverage"]["ran"], REQ)


@pytest.mark.parametrize(
    "case", ["unknown-rev", "old-dirty", "fabricated-blob", "stale-before-blob", "current-dirty"]
)
def test_hostile_stale_assessment_candidate_side(pool: HostPool, case: str) -> None:
    """Stale candidate input (host freshness): only `{rev}` or the current `{rev, dirty}` is fresh."""
    hut = pool.get(one_provider("clean"))
    changes = hut.edit({f"src/h_candidate_{case}.py": f"S = {len(case)}\n"})
    if case == "unknown-rev":
        changeset: dict[str, Any] = {
            "baseline": {"rev": "git:tree:" + "0" * 40},
            "changes": changes,
        }
    elif case == "old-dirty":
        changeset = {
            "baseline": {**hut.baseline(), "dirty": "sha256:" + "0" * 64},
            "changes": changes,
        }
    elif case == "current-dirty":
        # relative to the dirty work tree: before = the edited file, after = an uploaded blob
        current = hut.status()["workspace"]["baseline"]
        assert "dirty" in current
        uploaded = hut.call("host/putBlob", {"bytes": "S = 0\n", "encoding": "utf-8"})["blobId"]
        change = {**changes[0], "kind": "modify", "before": changes[0]["after"], "after": uploaded}
        changeset = {
            "baseline": {"rev": current["rev"], "dirty": current["dirty"]},
            "changes": [change],
        }
    elif case == "stale-before-blob":
        drifted = hut.edit({"src/app.py": "def add(a, b):\n    return b + a\n"})[0]
        drifted["before"] = blob_id(b"not what HEAD holds\n")
        changeset = {"baseline": hut.baseline(), "changes": [drifted]}
    else:
        fabricated = blob_id(b"content that exists nowhere\n")
        change = {"path": "src/h_fabricated.py", "kind": "create", "after": fabricated}
        changeset = {"baseline": hut.baseline(), "changes": [change]}
    result = hut.evaluate("gate", changeset)
    if case == "current-dirty":
        assert result["decision"] == "allow", "the full current snapshot is a fresh baseline"
        return
    assert result["decision"] == "indeterminate"
    entry = checks.assert_degraded(result, "stale-baseline")
    if case in ("fabricated-blob", "stale-before-blob"):
        assert entry["detail"].startswith("blob_unavailable:"), entry


# -- HOSTILE-MISSING-REQUIRED-PROVIDER -------------------------------------------------------


@pytest.mark.parametrize(
    "fake",
    [
        Fake("clean", id="fake-absent", installed=False),
        Fake("clean", id="fake-relative-bin", bin="python3"),
        Fake("clean", id="fake-claims-trust", manifest_extra=(("trusted", True),)),
    ],
    ids=["not-installed", "relative-bin", "host-rejected-field"],
)
def test_hostile_missing_required_provider(pool: HostPool, fake: Fake) -> None:
    config = HostConfig(requirements=(Req(REQ, (fake,)),), required=(("gate", (REQ,)),))
    hut = pool.get(config)
    result = hut.evaluate("gate", hut.changeset({"src/h_missing.py": "M = 1\n"}))
    assert result["decision"] == "indeterminate"
    assert checks.mentions(result["coverage"]["required"], REQ)
    assert result["coverage"]["ran"] == []
    degraded = result["coverage"]["degraded"]
    assert any(e.get("requirement") == REQ or e["source"] == fake.pid for e in degraded), degraded
    if not fake.tampered:
        assert checks.reasons(result) & {"missing-required-provider", "missing"}
    assert result["receipt"]["failures"], "receipt failures carry the gap"
    assert fake.pid not in checks.provenance_ids(result), (
        "a provider that never ran has no provenance"
    )
    assert not checks.granted_for(result, REQ)


# -- HOSTILE-OPTIONAL-DEGRADED-PROVIDER ------------------------------------------------------

OPTIONAL_CONFIG = HostConfig(
    requirements=(
        Req(REQ, (Fake("clean"),)),
        Req(OPT, (Fake("crash-evaluate", id="fake-optional"),)),
    ),
    required=(("gate", (REQ,)),),
    optional=(("gate", (OPT,)),),
)


def test_hostile_optional_degraded_provider(pool: HostPool) -> None:
    hut = pool.get(OPTIONAL_CONFIG, fresh=True)
    result = hut.evaluate("gate", hut.changeset({"src/h_optional.py": "O = 1\n"}))
    assert result["decision"] == "allow", "clean required coverage may allow"
    checks.assert_degraded(result, "optional-degraded", {OPT, "fake-optional"})
    assert checks.mentions(result["coverage"]["ran"], REQ)
    assert not checks.mentions(result["coverage"]["required"], OPT)

    status = hut.status()
    entry = checks.server(status, "fake-optional")
    assert entry.get("role", "optional") == "optional" or entry["enrollmentState"] == "optional"
    assert entry["state"] != "ready" or entry["lifecycleState"] not in ("initialized", "active"), (
        entry
    )
    assert status["gates"]["gate"]["available"] is True, (
        "an optional failure does not close the gate"
    )
    caps = hut.capabilities()
    source = checks.server(caps, "fake-optional", "sources")
    assert (
        source["state"] != "ready"
        or source["lifecycleState"] not in ("initialized", "active")
        or caps["coverage"]["degraded"]
        or caps["capabilities"]["check"]["degraded"]
    ), "the optional failure stays visible in capability coverage"


# -- HOSTILE-UNSUPPORTED-REQUIRED-CAPABILITY -------------------------------------------------


@pytest.mark.parametrize("behavior", ["no-check-capability", "unsupported"])
def test_hostile_unsupported_required_capability(pool: HostPool, behavior: str) -> None:
    hut = pool.get(one_provider(behavior))
    result = hut.evaluate("gate", hut.changeset({f"src/h_{behavior}.py": "U = 1\n"}))
    assert_blocked(result, "unsupported", f"fake-{behavior}")
    assert not checks.find_degraded(result, "error", checks.who(f"fake-{behavior}")), (
        "unsupported is not error"
    )
    if behavior == "no-check-capability":
        entry = checks.server(hut.status(), "fake-no-check-capability")
        assert "incompatible" in (entry["state"], entry["lifecycleState"]), entry


# -- HOSTILE-INCOMPLETE-REQUIRED-COVERAGE ----------------------------------------------------


def test_hostile_incomplete_required_coverage(pool: HostPool) -> None:
    result = gate_eval(pool, one_provider("incomplete"), "src/h_incomplete.py")
    assert_blocked(result, "incomplete", "fake-incomplete")


# -- HOSTILE-PROVIDER-ERROR ------------------------------------------------------------------


@pytest.mark.parametrize("behavior", ["error", "rpc-error"])
def test_hostile_provider_error(pool: HostPool, behavior: str) -> None:
    result = gate_eval(pool, one_provider(behavior), f"src/h_{behavior}.py", fresh=True)
    assert result["decision"] == "indeterminate"
    if behavior == "error":
        assert_blocked(result, "error", "fake-error")
        assert not checks.find_degraded(result, "unsupported", checks.who("fake-error"))
    else:
        assert checks.reasons(result) & checks.HEALTH_REASONS, result["coverage"]
        assert "fail-open" not in checks.reasons(result), "gate fails closed"


# -- HOSTILE-CANCELLED-PROVIDER-REQUEST ------------------------------------------------------


def test_hostile_cancelled_provider_request(pool: HostPool) -> None:
    result = gate_eval(pool, one_provider("cancelled"), "src/h_cancelled.py")
    assert_blocked(result, "cancelled", "fake-cancelled")

    hut = pool.get(one_provider("hang"), fresh=True)
    params = {"callSite": "gate", "changeset": hut.changeset({"src/h_cancel_outer.py": "C = 1\n"})}
    hut.host.raw_request("outer-cancel", "host/evaluateChangeset", params)
    hut.host.send_message(
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "outer-cancel"}}
    )
    answer = hut.host.wait_message("outer-cancel", timeout=15)
    assert "error" in answer, "a cancelled evaluation is not a decision"
    assert answer["error"]["code"] == -32016
    assert answer["error"]["data"]["failClass"] == "health"
    assert hut.status()["host"]["state"] in ("ready", "degraded"), "the host keeps serving"
    hut.verify_tree()


# -- HOSTILE-SLOW-PROVIDER-TIMEOUT -----------------------------------------------------------


def test_hostile_slow_provider_timeout(pool: HostPool) -> None:
    hut = pool.get(one_provider("hang", budget_ms=1000), fresh=True)
    started = time.monotonic()
    result = hut.evaluate("gate", hut.changeset({"src/h_timeout.py": "T = 1\n"}))
    assert time.monotonic() - started < 15, "the budget bounds the evaluation"
    entry = assert_blocked(result, "timed-out", "fake-hang")
    assert entry.get("providerState", "timed-out") in ("timed-out", "degraded", "crashed", "exited")

    budget = pool.get(one_provider("hang", id="fake-hang-param-budget"), fresh=True)
    started = time.monotonic()
    result = budget.evaluate("gate", budget.changeset({"src/h_t2.py": "T = 2\n"}), timeoutMs=800)
    # The gate's default budget is 30 s; well under it proves the 800 ms applied, with room for a
    # loaded machine's provider start and clean-up.
    assert time.monotonic() - started < 20, "params.timeoutMs below the policy budget applies"
    assert_blocked(result, "timed-out", "fake-hang-param-budget")

    progress: list[Any] = []
    slow_host = pool.get(one_provider("slow-progress"))
    changeset = slow_host.changeset({"src/h_slow.py": "SLOW = 1\n"})
    slow = slow_host.evaluate("gate", changeset, progress=progress)
    assert slow["decision"] == "allow", "progress then a clean final result within budget"
    assert progress, "provider $/progress is relayed to the outer client"
    for value in progress:
        checks.validate({"token": 1, "value": value}, "progress.schema.json#/$defs/params")


# -- HOSTILE-PROVIDER-CRASH ------------------------------------------------------------------


@pytest.mark.parametrize("behavior", ["crash-initialize", "crash-evaluate"])
def test_hostile_provider_crash(pool: HostPool, behavior: str) -> None:
    result = gate_eval(pool, one_provider(behavior), f"src/h_{behavior}.py", fresh=True)
    entry = assert_blocked(result, "crashed", f"fake-{behavior}")
    assert entry.get("capability", "check") == "check"


# The host's promised wire form of a crashed provider's stderr excerpt. Spelled out here, not
# imported: this suite is a black-box conformance check and must not import the host.
STDERR_FENCE_BEGIN = "[provider stderr, untrusted provider output, last lines]"
STDERR_FENCE_END = "[end of provider stderr]"
STDERR_EXCERPT_CHARS = 400


def test_crashed_provider_stderr_tail_is_shown_fenced_in_its_status(pool: HostPool) -> None:
    hut = pool.get(one_provider("crash-evaluate"), fresh=True)
    hut.evaluate("gate", hut.changeset({"src/h_stderr.py": "S = 1\n"}))
    detail = checks.server(hut.status(), "fake-crash-evaluate")["detail"]
    assert detail.startswith("last failure crashed: "), detail
    fenced = detail[detail.index(STDERR_FENCE_BEGIN) : detail.index(STDERR_FENCE_END)]
    assert "scripted crash during check/evaluate" in fenced
    assert len(fenced) <= len(STDERR_FENCE_BEGIN) + STDERR_EXCERPT_CHARS + 3


# -- HOSTILE-QUARANTINED-PROVIDER ------------------------------------------------------------


def test_hostile_quarantined_provider(pool: HostPool) -> None:
    hut = pool.get(one_provider("crash-initialize"), fresh=True)
    changeset = hut.changeset({"src/h_quarantine.py": "Q = 1\n"})
    for _ in range(3):
        assert hut.evaluate("gate", changeset)["decision"] == "indeterminate"
    result = hut.evaluate("gate", changeset)
    assert_blocked(result, "quarantined", "fake-crash-initialize")
    entry = checks.server(hut.authority_status(), "fake-crash-initialize", "providers")
    assert "quarantined" in (entry["state"], entry["lifecycleState"], entry["enrollmentState"]), (
        entry
    )


# -- HOSTILE-MISSING-AUTHORITY ---------------------------------------------------------------


def test_hostile_missing_authority(pool: HostPool) -> None:
    config = one_provider("clean", pin=(("integrity", "sha256:" + "1" * 64),))
    hut = pool.get(config)
    result = hut.evaluate("gate", hut.changeset({"src/h_authority.py": "A = 1\n"}))
    assert result["decision"] == "indeterminate"
    checks.named(result, "missing-authority", "fake-clean")
    assert not checks.granted_for(result, REQ)
    authority = hut.authority_status()
    assert authority["policyActivation"] == "base-active"
    evidence = checks.server(authority, "fake-clean", "providers")["authorityEvidence"]
    assert evidence["authority"]["granted"] is False, "host-owned authority evidence says no"


# -- HOSTILE-INSUFFICIENT-ASSURANCE ----------------------------------------------------------


def test_hostile_insufficient_assurance(pool: HostPool) -> None:
    hut = pool.get(one_provider("clean", req_assurance=("gated",)))
    result = hut.evaluate("gate", hut.changeset({"src/h_assurance.py": "G = 1\n"}))
    assert result["decision"] == "indeterminate"
    checks.named(result, "insufficient-assurance", "fake-clean")
    assert result["assurance"]["mode"] == "advisory"
    assert result["receipt"]["assurance"]["mode"] == "advisory"


# -- HOSTILE-POLICY-SELF-AUTHORIZATION -------------------------------------------------------


@pytest.mark.parametrize("edit", ["weaken-policy", "new-file-under-asp", "claimed-base-policy"])
def test_hostile_policy_self_authorization(pool: HostPool, edit: str) -> None:
    hut = pool.get(one_provider("clean"))
    base_digest = hut.status()["policy"]["policyDigest"]
    if edit == "weaken-policy":
        weakened = json.loads(json.dumps(hut.policy))
        for gate in weakened["gates"].values():
            gate["requiredRequirements"] = []
        files: dict[str, str | None] = {".asp/asp.json": json.dumps(weakened, indent=2) + "\n"}
    elif edit == "new-file-under-asp":
        files = {".asp/local.json": '{"weakenGate": true}\n'}
    else:
        # the harness claims a different base policy: a policy mismatch is never an allow
        changeset = hut.changeset({"src/h_policy.py": "P = 0\n"})
        result = hut.evaluate("gate", changeset, basePolicyDigest="sha256:" + "0" * 64)
        assert result["decision"] == "indeterminate"
        assert result["policyDigest"] == base_digest
        assert result["coverage"]["degraded"], "the mismatch is visible"
        return
    result = hut.evaluate("gate", hut.changeset({**files, "src/h_policy.py": "P = 1\n"}))
    assert result["decision"] == "indeterminate"
    entry = checks.assert_degraded(result, "policy-self-authorization")
    assert entry["source"].startswith(".asp/")
    assert result["policyDigest"] == base_digest, "the base policy evaluates the change"
    assert checks.mentions(result["coverage"]["required"], REQ), (
        "the candidate cannot drop requirements"
    )


# -- HOSTILE-DIRECT-WRITE-RISK ---------------------------------------------------------------


@pytest.mark.parametrize(
    "fake",
    [
        Fake("requests-write"),
        Fake("clean", id="fake-manifest-writes", write_paths=("workspace:**",)),
    ],
    ids=["initialize-requests-write", "manifest-declares-write"],
)
def test_hostile_direct_write_risk(pool: HostPool, fake: Fake) -> None:
    config = HostConfig(requirements=(Req(REQ, (fake,)),), required=(("gate", (REQ,)),))
    result = gate_eval(pool, config, "src/h_write.py")
    assert result["decision"] == "deny"
    checks.named(result, "direct-write-risk", fake.pid)
    assert result["assurance"]["mode"] in ("advisory", "gated")


# -- HOSTILE-NO-OPCORE-FAST-PATH -------------------------------------------------------------

SCANNED = [
    TESTS / "conformance" / "test_core_conformance.py",
    TESTS / "conformance" / "test_hostile_conformance.py",
    TESTS / "host" / "test_host_bad_input.py",
    TESTS / "support" / "host_harness.py",
    TESTS / "support" / "host_pool.py",
    TESTS / "support" / "host_scenarios.py",
    TESTS / "support" / "host_checks.py",
    TESTS / "support" / "provider_probe.py",
]
PROVIDER_FAMILIES = ("check", "judge", "edit", "act", "sense", "inspect")
PRIVILEGED = re.compile(r"^(opcore|lattice|rox|crg|cix)(/|-asp-provider$|$)", re.IGNORECASE)
# Where a provider method may appear, and why it is not a bypass:
ALLOWED_PROVIDER_CALLS = {
    # the dedicated fast-path test sends provider methods to the host and expects rejection
    ("test_core_conformance.py", "test_core_no_lattice_fast_path"),
    # the probe *is* a minimal independent host; it observes Assessments, never decides
    ("provider_probe.py", "_probe"),
}


def _strings_by_function(path: Path) -> list[tuple[str, str]]:
    """(enclosing top-level function or '<module>', string constant) for every string in *path*."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, str]] = []
    for node in tree.body:
        name = (
            node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else "<module>"
        )
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                found.append((name, sub.value))
    return found


def _is_provider_method(text: str) -> bool:
    """`family/verb` strings of the inner seam (check/evaluate, sense/references, ...)."""
    family, _, verb = text.partition("/")
    return family in PROVIDER_FAMILIES and verb.isidentifier()


def test_hostile_no_opcore_fast_path() -> None:
    """Token scan: no privileged provider call or old-tool path bypasses the host in this suite."""
    present = [p for p in SCANNED if p.exists()]
    assert len(present) >= 6
    for path in present:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(n.startswith("reference_host") for n in names), (
                f"{path.name} imports the host"
            )
        for function, text in _strings_by_function(path):
            assert not PRIVILEGED.match(text), (
                f"{path.name}:{function} names a privileged path {text!r}"
            )
            if _is_provider_method(text):
                assert (path.name, function) in ALLOWED_PROVIDER_CALLS, (
                    f"{path.name}:{function} uses provider method {text!r} outside the allowed places"
                )
    provider_calls = {
        (path.name, fn)
        for path in present
        for fn, text in _strings_by_function(path)
        if _is_provider_method(text)
    }
    assert ("test_core_conformance.py", "test_core_no_lattice_fast_path") in provider_calls, (
        "the fast-path rejection test must exist and exercise the host"
    )


def test_hostile_host_survives_the_matrix(pool: HostPool) -> None:
    """After hostile providers, the host still answers a clean evaluate (no shared corruption)."""
    hut = pool.get(one_provider("clean"))
    result = hut.evaluate("gate", hut.changeset({"src/h_after_matrix.py": "OK = 1\n"}))
    assert result["decision"] == "allow"


LEFT_OUT: dict[str, str] = {}


# -- HOSTILE-COMMAND-LIKE-EDIT-OUTPUT --------------------------------------------------------


def test_hostile_command_like_edit_output(pool: HostPool) -> None:
    """A hostile edit provider's command-like plan is rejected as data before any apply."""
    hut = pool.get(edit_config("command-like"))
    result = request_plan(hut)
    assert "command-like" in rejected_plan(result, "malformed")["detail"]
    assert "PWNED" not in str(result["proposal"]), "the commands never reach the caller"
    applied = apply(hut, result["proposal"]["proposalId"])
    assert applied["applied"] is False and applied["baselineAfter"] is None
    assert not (hut.repo / "PWNED.txt").exists()
    hut.verify_tree()


@pytest.mark.needs_definitions
def test_every_hostile_id_has_its_test() -> None:
    """Each HOSTILE-* id of CONFORMANCE.md has a test named for it here, or a stated reason."""
    checks.assert_each_id_has_a_test("HOSTILE", 19, globals(), left_out=LEFT_OUT)
