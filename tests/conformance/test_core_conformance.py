"""CORE-* conformance (CONFORMANCE.md §1): the real `asp-host serve`, driven black-box over stdio.

One test per requirement id. Every outer result is schema-validated and checked for the envelope
invariants in `support.host_checks` (pass projection, coverage bookkeeping, receipt failures
mirroring degraded coverage, digests); each test then asserts its own decision and degradation.
Providers are `asp-fake-provider` behaviours installed through trusted manifests, pinned by the
repository policy at HEAD of a temporary git repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.canonical import blob_id, changeset_digest, config_digest, digest, policy_digest
from asp_protocol.errors import AspError
from asp_protocol.host_owned import find_host_owned_fields
from tests.support.definitions import definition_dir, load_json, require_definitions, schema_errors
from tests.support.gitrepo import write_files
from tests.support.host_checks import (
    ASSESSMENT_REF,
    assert_degraded,
    assert_each_id_has_a_test,
    check_envelope,
    check_status,
    find_degraded,
    granted_for,
    mentions,
    named,
    provenance_ids,
    reasons,
    server,
    validate,
    who,
)
from tests.support.host_harness import HostProcess
from tests.support.host_pool import HostPool, head_tree
from tests.support.host_scenarios import (
    CALL_SITES,
    FAKE_MODULE,
    REQ,
    Fake,
    HostConfig,
    Req,
    one_provider,
    policy_for,
)
from tests.support.provider_probe import PROBE_BASELINE, probe

CLEAN = one_provider("clean")
FINDING = one_provider("finding")
MISSING = one_provider("clean", id="fake-not-installed", installed=False)
SRC_EDIT = {"src/app.py": "def add(a, b):\n    return a + b + 0\n"}


def evaluate_edit(
    pool: HostPool, config: HostConfig, call_site: str = "gate", **kw: Any
) -> dict[str, Any]:
    hut = pool.get(config, fresh=kw.pop("fresh", False))
    return hut.evaluate(call_site, hut.changeset(kw.pop("files", SRC_EDIT)), **kw)


@pytest.mark.needs_definitions
def test_schema_validation_active() -> None:
    """Makes a missing definition bundle visible: schema checks elsewhere are no-ops without it."""
    require_definitions()


# -- CORE-HOST-STATUS ------------------------------------------------------------------------


def test_core_host_status(pool: HostPool) -> None:
    hut = pool.get(CLEAN, fresh=True)
    status = hut.status()
    assert status["host"]["state"] in ("ready", "degraded")
    assert status["host"]["bindingCandidate"] == "json-rpc-stdio"
    baseline = status["workspace"]["baseline"]
    assert baseline["rev"] == "git:tree:" + head_tree(hut.repo)
    assert "dirty" not in baseline, "a clean work tree has no dirty digest"
    policy = status["policy"]
    assert policy["source"] == ".asp/asp.json"
    assert policy["activation"] == "active"
    assert policy["policyDigest"] == policy_digest(hut.policy)
    entry = server(status, "fake-clean")
    assert entry["capabilities"] == ["check"]
    assert set(entry["requiredFor"]) == set(CALL_SITES)
    assert entry["enrollmentState"] == "enrolled"
    assert entry["capabilityStates"]["check"]["advertised"] is True
    for site in CALL_SITES:
        gate = status["gates"][site]
        assert gate["available"] is True, gate
        assert "check" in gate["requiredCapabilities"]
    assert status["capabilities"]["check"]["available"] is True
    assert mentions(status["receipt"]["coverage"]["required"], REQ)

    new_bytes = SRC_EDIT["src/app.py"].encode()
    hut.edit(SRC_EDIT)
    dirty = hut.status()["workspace"]["baseline"]
    assert dirty["rev"] == baseline["rev"], "uncommitted edits do not move the committed rev"
    assert dirty.get("dirty") == digest([["src/app.py", blob_id(new_bytes)]])

    hut.evaluate("gate", {"baseline": {"rev": baseline["rev"]}, "changes": hut.edit(SRC_EDIT)})
    authority = hut.authority_status()
    assert authority["policyActivation"] == "base-active"
    assert authority["policyDigest"] == policy["policyDigest"]
    evidence = server(authority, "fake-clean", "providers")["authorityEvidence"]
    assert evidence["authority"]["granted"] is True and evidence["authority"]["requirement"] == REQ
    after = server(hut.status(), "fake-clean")
    assert after["lifecycleState"] in ("initialized", "active"), after
    assert after["state"] == "ready"
    assert after["authorityEvidence"]["authority"]["granted"] is True


def test_core_host_status_outside_git(tmp_path: Path) -> None:
    """Outside git the baseline is `tree:` + digest of the sorted [path, blobId] list (docs/architecture.md#wire-and-digests)."""
    write_files(tmp_path, {"a/x.py": "x = 1\n", "b.txt": "b\n"})
    host = HostProcess(tmp_path).start()
    try:
        status = host.call("host/status", {})
        check_status(status)
    finally:
        assert host.stop() == 0
    pairs = sorted([["a/x.py", blob_id(b"x = 1\n")], ["b.txt", blob_id(b"b\n")]])
    assert status["workspace"]["baseline"] == {"rev": "tree:" + digest(pairs)}


def test_core_host_status_rejected_policy(pool: HostPool) -> None:
    """A repository policy with a forbidden launch key is rejected, visibly, and never allows."""
    bad_policy = {**policy_for(CLEAN), "command": "rm -rf /"}
    config = HostConfig(with_policy=False, extra_files=((".asp/asp.json", json.dumps(bad_policy)),))
    hut = pool.get(config)
    status = hut.status()
    assert status["policy"]["activation"] == "rejected", status["policy"]
    assert status["host"]["state"] in ("degraded", "unavailable")
    result = hut.evaluate("gate", hut.changeset({"src/core_rejected.py": "R = 1\n"}))
    assert result["decision"] == "indeterminate"
    assert result["coverage"]["degraded"], "a rejected policy is visible degraded coverage"


# -- CORE-HOST-CAPABILITIES ------------------------------------------------------------------


def test_core_host_capabilities(pool: HostPool) -> None:
    hut = pool.get(CLEAN)
    caps = hut.capabilities()
    check = caps["capabilities"]["check"]
    assert check["available"] is True
    assert set(check["requiredFor"]) == set(CALL_SITES)
    assert "fake-clean" in check["providers"]
    for family in ("inspect", "edit"):
        assert caps["capabilities"][family]["requiredFor"] == [], f"{family} is not Core"
    assert mentions(caps["coverage"]["required"], REQ)
    assert server(caps, "fake-clean", "sources")["capabilities"] == ["check"]
    if "legacyRoles" in caps:
        assert caps["legacyRoles"].get("judge", True) is True
    # the edit profile is built (non-Core): incomplete params are an input error, not a refusal
    for method in ("host/requestEditPlan", "host/applyProposal"):
        with pytest.raises(AspError) as refused:
            hut.call(method, {"callSite": "interactive"})
        assert refused.value.fail_class == "input"


# -- CORE-HOST-EVALUATE ----------------------------------------------------------------------


@pytest.mark.parametrize("case", ["allow", "deny", "indeterminate", "builtin-default-policy"])
def test_core_host_evaluate(pool: HostPool, case: str) -> None:
    cases = {
        "allow": _evaluate_allow,
        "deny": _evaluate_deny,
        "indeterminate": _evaluate_indeterminate,
        "builtin-default-policy": _evaluate_builtin_default_policy,
    }
    cases[case](pool)


def _evaluate_allow(pool: HostPool) -> None:
    hut = pool.get(CLEAN)
    changeset = hut.changeset({"src/core_allow.py": "VALUE = 1\n"})
    result = hut.evaluate("gate", changeset)
    assert result["decision"] == "allow"
    assert result["coverage"]["degraded"] == [] and result["coverage"]["exhaustive"] is True
    assert mentions(result["coverage"]["ran"], REQ)
    assert granted_for(result, REQ), result["authorityEvidence"]
    assert result["validAsOf"]["rev"] == changeset["baseline"]["rev"]
    assert result["changesetDigest"] == changeset_digest(changeset)
    assert "fake-clean" in provenance_ids(result)
    assert "fake-clean" in result["receipt"]["providerIds"]
    assert result["assurance"]["mode"] == "advisory"
    working = hut.call("host/workingChangeset", {"paths": ["src/core_allow.py"]})
    assert working["baseline"]["rev"] == changeset["baseline"]["rev"]
    assert working["changeset"]["changes"] == changeset["changes"]

    odd = hut.changeset({"src/naïve name with spaces.py": "N = 1\n", "docs/notes.txt": None})
    assert hut.evaluate("gate", odd)["decision"] == "allow", "unicode paths and deletes evaluate"
    moved = {"path": "src/moved.py", "kind": "rename", "from": "src/util.py"}
    moved["before"] = blob_id((hut.repo / "src/util.py").read_bytes())
    renamed = hut.evaluate("gate", {"baseline": hut.baseline(), "changes": [moved]})
    assert renamed["decision"] == "allow", renamed["coverage"]


def _evaluate_deny(pool: HostPool) -> None:
    result = evaluate_edit(pool, FINDING, files={"src/core_deny.py": "x = 1\n"})
    assert result["decision"] == "deny"
    named(result, "blocking-diagnostic", "fake-finding")
    assert mentions(result["coverage"]["ran"], REQ)
    gating = [f for f in result["findings"] if f["disposition"] == "gating"]
    assert len(gating) == 1
    diagnostic = gating[0]["diagnostic"]
    assert diagnostic["location"]["path"] == "src/core_deny.py"
    assert diagnostic["code"] == "fake-finding/finding"
    assert diagnostic["source"] == "fake-finding"
    assert gating[0]["authority"]["authority"]["granted"] is True


def _evaluate_indeterminate(pool: HostPool) -> None:
    result = evaluate_edit(pool, MISSING)
    assert result["decision"] == "indeterminate"
    assert reasons(result) & {"missing-required-provider", "missing"}
    assert result["coverage"]["ran"] == []
    assert result["authorityEvidence"] == [] or not granted_for(result, REQ)


def _evaluate_builtin_default_policy(pool: HostPool) -> None:
    """No `.asp/asp.json`: the built-in policy requires the real asp-python-check everywhere."""
    hut = pool.get(HostConfig(with_policy=False))
    status = hut.status()
    assert status["policy"]["source"] != ".asp/asp.json"
    assert server(status, "asp-python-check")["enrollmentState"] == "enrolled"
    bad = hut.evaluate("gate", hut.changeset({"src/builtin_bad.py": "print(undefined_name)\n"}))
    assert bad["decision"] == "deny"
    codes = {f["diagnostic"]["code"] for f in bad["findings"] if f["disposition"] == "gating"}
    assert "python/undefined-name" in codes, bad["findings"]
    assert {f["diagnostic"]["source"] for f in bad["findings"]} == {"asp-python-check"}
    good = hut.evaluate("gate", hut.changeset({"src/builtin_bad.py": "print('fine')\n"}))
    assert good["decision"] == "allow", good["coverage"]
    assert mentions(good["coverage"]["ran"], "python-check")


# -- CORE-CHECK-ASSESSMENT -------------------------------------------------------------------

BEFORE = {"src/app.py": b"def add(a, b):\n    return a + b\n", "README.md": b"# r\n"}
AFTER: dict[str, bytes | None] = {
    "src/app.py": b"def add(a, b):\n    return a - b\n",
    "src/new.py": b"N = 1\n",
}


@pytest.mark.parametrize(
    "behavior", ["clean", "finding", "incomplete", "unsupported", "cancelled", "error"]
)
def test_core_check_assessment(behavior: str) -> None:
    got = probe(
        ["-m", FAKE_MODULE, "--behavior", behavior, "--id", f"fake-{behavior}"], BEFORE, AFTER
    )
    assert got.initialize_error is None and got.error is None, (got.initialize_error, got.error)
    assessment = got.assessment
    validate(assessment, ASSESSMENT_REF)
    assert assessment["status"] == {"clean": "complete", "finding": "complete"}.get(
        behavior, behavior
    )
    assert find_host_owned_fields(assessment) == []
    valid_as_of = assessment["validAsOf"]
    assert valid_as_of["baseline"] == PROBE_BASELINE
    assert valid_as_of["changesetDigest"] == changeset_digest(got.changeset)
    assert set(valid_as_of["blobs"]) <= got.served, "claims blobs it never read"
    assert assessment["provider"]["id"] == f"fake-{behavior}"
    assert assessment["provider"]["configDigest"].startswith("sha256:")
    assert "elapsedMs" in assessment["timing"] or {"startedAt", "endedAt"} <= set(
        assessment["timing"]
    )
    if behavior == "finding":
        assert [d["code"] for d in assessment["diagnostics"]] == ["fake-finding/finding"]
    if definition_dir() is not None:
        validate(load_json("fixtures/core/check-assessment.valid.complete.json"), ASSESSMENT_REF)


# -- CORE-CHECK-CONFIGURATION ----------------------------------------------------------------


def test_core_check_configuration(pool: HostPool) -> None:
    if definition_dir() is not None:  # the official fixtures need the bundle
        params_ref = "check-evaluate.schema.json#/$defs/params"
        assert (
            schema_errors(
                load_json("fixtures/core/check-evaluate.configuration.valid.json"), params_ref
            )
            == []
        )
        assert schema_errors(
            load_json("fixtures/core/check-evaluate.configuration.invalid.null.json"), params_ref
        )

    args = ["-m", "reference_host.providers.python_check"]
    omitted = probe(args, BEFORE, AFTER)
    explicit = probe(args, BEFORE, AFTER, evaluate_extra={"configuration": {}})
    assert omitted.assessment and explicit.assessment, (omitted.error, explicit.error)
    expected = config_digest("asp-python-check", "check/1.0", {})
    assert omitted.assessment["provider"]["configDigest"] == expected
    assert explicit.assessment["provider"]["configDigest"] == expected
    for bad in (None, {"no-such-setting": 1}):
        refused = probe(args, BEFORE, AFTER, evaluate_extra={"configuration": bad})
        assert refused.assessment is None and refused.error is not None
        assert refused.error.fail_class == "input", refused.error

    result = evaluate_edit(pool, one_provider("wrong-config-digest"))
    assert result["decision"] == "indeterminate"
    assert find_degraded(result, "malformed", who("fake-wrong-config-digest")) or find_degraded(
        result, "stale", who("fake-wrong-config-digest")
    ), result["coverage"]
    assert not mentions(result["coverage"]["ran"], REQ)


# -- CORE-PROVIDER-FORBIDDEN-FIELDS ----------------------------------------------------------


@pytest.mark.parametrize("where", ["top-level", "nested"])
def test_core_provider_forbidden_fields(pool: HostPool, where: str) -> None:
    if definition_dir() is not None:  # the official fixtures need the bundle
        fixture = load_json(f"fixtures/core/check-assessment.invalid.host-owned-{where}.json")
        assert schema_errors(fixture, ASSESSMENT_REF), (
            "the official host-owned fixture must be rejected"
        )
        assert find_host_owned_fields(fixture)

    behavior = f"forged-{where}"
    raw = probe(
        ["-m", FAKE_MODULE, "--behavior", behavior, "--id", f"fake-{behavior}"], BEFORE, AFTER
    )
    assert raw.assessment is not None
    assert find_host_owned_fields(raw.assessment), "the fake really forges host-owned fields"
    if definition_dir() is not None:
        assert schema_errors(raw.assessment, ASSESSMENT_REF)

    result = evaluate_edit(pool, one_provider(behavior))
    assert result["decision"] == "indeterminate"
    named(result, "malformed", f"fake-{behavior}")
    assert not mentions(result["coverage"]["ran"], REQ)


# -- CORE-STALE-VALID-AS-OF ------------------------------------------------------------------


def test_core_stale_valid_as_of(pool: HostPool) -> None:
    result = evaluate_edit(pool, one_provider("stale-baseline"))
    assert result["decision"] == "indeterminate"
    named(result, "stale", "fake-stale-baseline")
    assert not mentions(result["coverage"]["ran"], REQ)
    assert not granted_for(result, REQ) or result["decision"] != "allow"


# -- CORE-MISSING-REQUIRED-PROVIDER ----------------------------------------------------------


def test_core_missing_required_provider(pool: HostPool) -> None:
    hut = pool.get(MISSING)
    result = hut.evaluate("gate", hut.changeset({"src/core_missing.py": "M = 1\n"}))
    assert result["decision"] == "indeterminate"
    entry = next(
        e
        for e in result["coverage"]["degraded"]
        if e["reason"] in ("missing-required-provider", "missing")
    )
    assert entry.get("requirement") == REQ or entry["source"] in who("fake-not-installed")
    assert result["coverage"]["ran"] == []
    assert "fake-not-installed" not in provenance_ids(result)
    gate = hut.status()["gates"]["gate"]
    assert gate["available"] is False or gate["degraded"], gate


# -- CORE-MISSING-AUTHORITY ------------------------------------------------------------------


def test_core_missing_authority(pool: HostPool) -> None:
    config = one_provider("clean", pin=(("version", "9.9.9"),))
    hut = pool.get(config)
    result = hut.evaluate("gate", hut.changeset({"src/core_authority.py": "A = 1\n"}))
    assert result["decision"] == "indeterminate"
    named(result, "missing-authority", "fake-clean")
    assert not granted_for(result, REQ)
    evidence = server(hut.authority_status(), "fake-clean", "providers")["authorityEvidence"]
    assert evidence["authority"]["granted"] is False


# -- CORE-INSUFFICIENT-ASSURANCE -------------------------------------------------------------


def test_core_insufficient_assurance(pool: HostPool) -> None:
    advisory = one_provider("clean", req_assurance=("gated",))
    result = evaluate_edit(pool, advisory)
    assert result["decision"] == "indeterminate"
    named(result, "insufficient-assurance", "fake-clean")
    assert result["assurance"]["mode"] == "advisory", "achieved assurance is reported honestly"

    gated = one_provider("clean", req_assurance=("gated",), assurance="gated")
    result = evaluate_edit(pool, gated)
    assert result["decision"] == "allow"
    assert result["assurance"]["mode"] == "gated"


# -- CORE-PROVIDER-QUARANTINED ---------------------------------------------------------------


def test_core_provider_quarantined(pool: HostPool) -> None:
    hut = pool.get(one_provider("crash-evaluate"), fresh=True)
    changeset = hut.changeset({"src/core_quarantine.py": "Q = 1\n"})
    for _ in range(3):
        result = hut.evaluate("gate", changeset)
        assert result["decision"] == "indeterminate"
        named(result, "crashed", "fake-crash-evaluate")
    result = hut.evaluate("gate", changeset)
    assert result["decision"] == "indeterminate"
    named(result, "quarantined", "fake-crash-evaluate")
    status = hut.status()
    entry = server(status, "fake-crash-evaluate")
    assert "quarantined" in (entry["state"], entry["lifecycleState"], entry["enrollmentState"]), (
        entry
    )
    assert status["host"]["state"] == "degraded"
    gate = status["gates"]["gate"]
    assert gate["available"] is False and any(
        d["reason"] == "quarantined" for d in gate["degraded"]
    )


# -- CORE-PROVIDER-SKEWED --------------------------------------------------------------------


@pytest.mark.parametrize(
    "fake",
    [
        Fake("version-refusal"),
        Fake("clean", id="fake-speaks-0-1", protocol="asp/0.1"),
        Fake(
            "clean",
            id="fake-legacy",
            protocol="asp/0.1",
            manifest_protocols=("asp/0.1",),
            settings=(("checks", ("fake.lines",)),),
        ),
    ],
    ids=["version-refusal", "protocol-mismatch", "legacy-0.1-per-manifest"],
)
def test_core_provider_skewed(pool: HostPool, fake: Fake) -> None:
    config = HostConfig(requirements=(Req(REQ, (fake,)),), required=(("gate", (REQ,)),))
    result = evaluate_edit(pool, config)
    if fake.manifest_protocols == ("asp/0.1",):
        # control: a trusted manifest that says asp/0.1 is negotiated exactly, not skewed
        assert result["decision"] == "allow", result["coverage"]
        return
    assert result["decision"] == "indeterminate"
    named(result, "skewed", fake.pid)


# -- CORE-HOST-INITIALIZE-CONTRACT-REFUSAL ---------------------------------------------------


def test_core_host_initialize_contract_refusal(pool: HostPool) -> None:
    hut = pool.get(one_provider("version-refusal"))
    result = hut.evaluate("gate", hut.changeset({"src/core_refusal.py": "R = 1\n"}))
    assert result["decision"] == "indeterminate"
    named(result, "skewed", "fake-version-refusal")
    assert "fake-version-refusal" not in provenance_ids(result), (
        "no initialized provider provenance"
    )
    assert not granted_for(result, REQ)
    entry = server(hut.status(), "fake-version-refusal")
    assert entry["lifecycleState"] in ("incompatible", "exited", "unavailable", "degraded"), entry
    assert entry["state"] != "ready"


# -- CORE-PROVIDER-FAIL-OPEN -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("behavior", "specific"),
    [("rpc-error", None), ("hang", "timed-out"), ("crash-evaluate", "crashed")],
    ids=["rpc-error", "hang", "crash-evaluate"],
)
def test_core_provider_fail_open(pool: HostPool, behavior: str, specific: str | None) -> None:
    # Only the hang needs a short budget; for the others a 1 s budget would also have to cover the
    # provider's start-up, which a loaded machine can exceed (then "timed-out" hides "crashed").
    if behavior == "hang":
        config = one_provider(behavior, budget_ms=1000, hang_seconds=30)
    else:
        config = one_provider(behavior)
    hut = pool.get(config, fresh=True)
    interactive = hut.evaluate("interactive", hut.changeset({"src/core_fail_open.py": "F = 1\n"}))
    assert interactive["decision"] == "indeterminate", "fail-open health is still not allow"
    named(interactive, "fail-open", f"fake-{behavior}")
    if specific:
        named(interactive, specific, f"fake-{behavior}")
    gate = hut.evaluate("gate", hut.changeset({"src/core_fail_open.py": "F = 2\n"}))
    assert gate["decision"] == "indeterminate"
    assert "fail-open" not in reasons(gate), "the gate call-site fails closed"
    sweep = hut.evaluate("sweep", hut.changeset({"src/core_fail_open.py": "F = 3\n"}))
    assert sweep["decision"] == "indeterminate"
    assert "fail-open" not in reasons(sweep), "fail-open is for interactive only"


# -- CORE-MALFORMED-REQUIRED-PROVIDER --------------------------------------------------------


def test_core_malformed_required_provider(pool: HostPool) -> None:
    result = evaluate_edit(pool, one_provider("malformed"))
    assert result["decision"] == "indeterminate"
    entry = named(result, "malformed", "fake-malformed")
    assert entry.get("capability", "check") == "check"
    assert not mentions(result["coverage"]["ran"], REQ)
    assert result["findings"] == []


# -- CORE-REQUIRED-COVERAGE-VISIBLE ----------------------------------------------------------

MATRIX: list[tuple[str, Fake, dict[str, Any], set[str]]] = [
    ("r-clean", Fake("clean", id="m-clean"), {}, set()),
    ("r-unsupported", Fake("unsupported", id="m-unsupported"), {}, {"unsupported"}),
    ("r-incomplete", Fake("incomplete", id="m-incomplete"), {}, {"incomplete"}),
    ("r-cancelled", Fake("cancelled", id="m-cancelled"), {}, {"cancelled"}),
    ("r-error", Fake("error", id="m-error"), {}, {"error"}),
    ("r-malformed", Fake("malformed", id="m-malformed"), {}, {"malformed"}),
    ("r-stale", Fake("stale-baseline", id="m-stale"), {}, {"stale"}),
    ("r-crashed", Fake("crash-evaluate", id="m-crash"), {}, {"crashed"}),
    (
        "r-missing",
        Fake("clean", id="m-missing", installed=False),
        {},
        {"missing-required-provider", "missing"},
    ),
    (
        "r-authority",
        Fake("clean", id="m-authority"),
        {"pin": (("version", "0.0.0"),)},
        {"missing-authority"},
    ),
    (
        "r-assurance",
        Fake("clean", id="m-assurance"),
        {"assurance": ("gated",)},
        {"insufficient-assurance"},
    ),
    ("r-skewed", Fake("version-refusal", id="m-skewed"), {}, {"skewed"}),
    ("r-nocheck", Fake("no-check-capability", id="m-nocheck"), {}, {"unsupported"}),
    ("r-write", Fake("requests-write", id="m-write"), {}, {"direct-write-risk"}),
]
MATRIX_CONFIG = HostConfig(
    requirements=tuple(Req(rid, (fake,), **extra) for rid, fake, extra, _ in MATRIX),
    required=(("gate", tuple(rid for rid, *_ in MATRIX)),),
)


def test_core_required_coverage_visible(pool: HostPool) -> None:
    hut = pool.get(MATRIX_CONFIG, fresh=True)
    result = hut.evaluate("gate", hut.changeset({"src/core_matrix.py": "MATRIX = 1\n"}))
    assert result["decision"] == "deny", "direct-write risk among required coverage denies"
    coverage = result["coverage"]
    assert {rid for rid, *_ in MATRIX} <= set(coverage["required"]) or all(
        mentions(coverage["required"], rid) for rid, *_ in MATRIX
    )
    assert mentions(coverage["ran"], "r-clean")
    for rid, fake, _, expected in MATRIX:
        if not expected:
            continue
        hits = [r for r in expected if find_degraded(result, r, {rid, fake.pid})]
        assert hits, f"{rid}: none of {expected} visible in {coverage['degraded']}"
        assert not mentions(coverage["ran"], rid) or rid in ("r-authority", "r-assurance")

    policy_edit = hut.changeset({".asp/asp.json": "{}\n"})
    result = hut.evaluate("gate", policy_edit)
    assert result["decision"] != "allow"
    entry = assert_degraded(result, "policy-self-authorization")
    assert entry["source"] == ".asp/asp.json"


# -- CORE-HOST-DECISION-AUTHORITATIVE --------------------------------------------------------


def test_core_host_decision_authoritative(pool: HostPool) -> None:
    forged = pool.get(one_provider("forged-top-level"))
    status = forged.status()
    first = forged.evaluate("gate", forged.changeset({"src/core_auth1.py": "P = 1\n"}))
    second = forged.evaluate("gate", forged.changeset({"src/core_auth2.py": "P = 2\n"}))
    for result in (first, second):
        assert result["decision"] == "indeterminate", (
            "a provider's own pass/decision is never the decision"
        )
        assert result["receipt"]["host"]["name"] == status["host"]["name"]
        assert result["receipt"]["host"]["version"] == status["host"]["version"]
    assert first["receipt"]["receiptId"] != second["receipt"]["receiptId"]

    deny = evaluate_edit(pool, FINDING, files={"src/core_auth3.py": "P = 3\n"})
    evidence = deny["authorityEvidence"]
    for finding in deny["findings"]:
        assert finding["authority"] in evidence, "finding authority is the host's own evidence"
        assert finding["diagnostic"]["source"] in deny["receipt"]["providerIds"]


# -- CORE-NO-LATTICE-FAST-PATH ---------------------------------------------------------------


def test_core_no_lattice_fast_path(pool: HostPool) -> None:
    hut = pool.get(CLEAN)
    changeset = hut.changeset({"src/core_fast.py": "FAST = 1\n"})
    for method in ("check/evaluate", "judge/evaluate"):
        params = {"changeset": changeset, "scope": "changeset", "comparison": "all"}
        result = hut.call(method, params)
        check_envelope(result, call_site=result["callSite"], params=params, method=method)
        assert result["decision"] == "deny"
        assert_degraded(result, "lattice-fast-path")
        assert result["coverage"]["ran"] == []
        assert result["authorityEvidence"] == []
        hut.verify_tree()
    for method in ("edit/propose", "act/propose", "sense/references"):
        with pytest.raises(AspError) as refused:
            hut.call(method, {"operation": "rename", "baseline": changeset["baseline"]})
        assert refused.value.fail_class == "policy", (method, refused.value)
    assert hut.evaluate("gate", changeset)["decision"] == "allow", (
        "the host still serves the real path"
    )


LEFT_OUT: dict[str, str] = {}


@pytest.mark.needs_definitions
def test_every_core_id_has_its_test() -> None:
    """Each CORE-* id of CONFORMANCE.md has a test named for it here, or a stated reason."""
    # CORE-SERVER-* is the provider suite, not the host's
    assert_each_id_has_a_test(
        "CORE", 18, globals(), left_out=LEFT_OUT, other_suites=("CORE-SERVER-",)
    )
