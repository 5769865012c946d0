"""asp-fake-provider over real pipes: every scripted behaviour is exactly what the contract says.

Clean output must be schema-valid, deliberately broken output must fail the schema the way the
official host-owned fixtures do, and crashes/hangs/refusals happen at the named point.
"""

from __future__ import annotations

from typing import Any

import pytest

from asp_protocol.canonical import changeset_digest, config_digest
from asp_protocol.errors import AspError, ConnectionClosed, RequestTimeout
from asp_protocol.host_owned import find_host_owned_fields
from reference_host.providers.fake import BEHAVIORS, CRASH_STATUS, OUT_OF_GRANT_PROBE, UNREAD_BLOB
from reference_host.sessions.compat_v01 import LegacyProfile
from reference_host.sessions.session import CheckCapability
from tests.support.definitions import assert_valid, load_json, schema_errors
from tests.support.provider_host import ProviderHost, provider_host, wait_exit

pytestmark = pytest.mark.anyio

FAKE = "reference_host.providers.fake"
FILES = {"src/app.py": "x = 1\n", "README.md": "hello\n"}
ASSESSMENT = "check-assessment.schema.json"


def fake(behavior: str, *extra: str):  # type: ignore[no-untyped-def]
    return provider_host(FAKE, "--behavior", behavior, *extra, files=FILES)


def params(host: ProviderHost, comparison: str = "all", **more: object) -> dict[str, object]:
    changeset = host.changeset({"src/app.py": "x = 2\n", "src/new.py": "y = 3\n"})
    return {"changeset": changeset, "scope": "changeset", "comparison": comparison, **more}


async def valid_assessment(
    host: ProviderHost, request: dict[str, object] | None = None
) -> dict[str, Any]:
    """Start the session, evaluate *request* (default: `params(host)`) and check the Assessment
    against its schema; the Assessment, for the test's own assertions."""
    await host.start()
    assessment = await host.evaluate(params(host) if request is None else request)
    assert_valid(assessment, ASSESSMENT)
    return assessment


@pytest.mark.needs_definitions
async def test_initialize_result_is_valid_and_read_only() -> None:
    async with fake("clean") as host:
        result = await host.initialize()
        assert_valid(result, "initialize.schema.json#/$defs/result")
        assert result["capabilities"]["check"]["diagnosticSources"] == ["asp-fake-provider"]
        assert result["requestedPermissions"]["write"] is False
        assert result["requestedPermissions"]["network"] is False


@pytest.mark.needs_definitions
async def test_clean_assessment_is_valid_and_claims_exactly_the_blobs_read() -> None:
    async with fake("clean") as host:
        await host.start()
        request = params(host)
        assessment = await host.evaluate(request)
        assert_valid(assessment, ASSESSMENT)
        assert assessment["status"] == "complete" and assessment["diagnostics"] == []
        assert assessment["validAsOf"]["baseline"] == request["changeset"]["baseline"]  # type: ignore[index]
        assert assessment["validAsOf"]["changesetDigest"] == changeset_digest(request["changeset"])
        assert sorted(assessment["validAsOf"]["blobs"]) == sorted(host.reads)
        assert assessment["provider"]["configDigest"] == config_digest(
            "asp-fake-provider", "check/1.0", {}
        )


@pytest.mark.needs_definitions
async def test_finding_is_one_namespaced_error_on_the_first_changed_path() -> None:
    async with provider_host(FAKE, "--behavior", "finding", "--id", "acme", files=FILES) as host:
        assessment = await valid_assessment(host, params(host, "introduced"))
        [diagnostic] = assessment["diagnostics"]
        assert diagnostic["code"] == "acme/finding" and diagnostic["source"] == "acme"
        assert diagnostic["severity"] == "error" and diagnostic["introduced"] is True
        assert diagnostic["location"]["path"] == "src/app.py"


@pytest.mark.parametrize(
    ("behavior", "status"),
    [
        ("unsupported", "unsupported"),
        ("incomplete", "incomplete"),
        ("error", "error"),
        ("cancelled", "cancelled"),
    ],
)
@pytest.mark.needs_definitions
async def test_scripted_statuses_are_valid_assessments(behavior: str, status: str) -> None:
    async with fake(behavior) as host:
        assessment = await valid_assessment(host)
        assert assessment["status"] == status
        assert assessment["coverage"]["exhaustive"] is False
        assert assessment["coverage"]["degraded"][0]["reason"] == status


@pytest.mark.needs_definitions
async def test_malformed_assessment_misses_required_fields() -> None:
    async with fake("malformed") as host:
        await host.start()
        assessment = await host.evaluate(params(host))
        errors = schema_errors(assessment, ASSESSMENT)
        assert any("'coverage' is a required property" in e for e in errors)


@pytest.mark.parametrize(
    ("behavior", "fixture"),
    [
        ("forged-top-level", "fixtures/core/check-assessment.invalid.host-owned-top-level.json"),
        ("forged-nested", "fixtures/core/check-assessment.invalid.host-owned-nested.json"),
    ],
)
@pytest.mark.needs_definitions
async def test_forged_host_fields_fail_the_schema_like_the_official_fixture(
    behavior: str, fixture: str
) -> None:
    official = load_json(fixture)
    assert schema_errors(official, ASSESSMENT)
    async with fake(behavior) as host:
        await host.start()
        assessment = await host.evaluate(params(host))
        assert schema_errors(assessment, ASSESSMENT)
        forged = find_host_owned_fields(assessment)
        assert forged
        if behavior == "forged-top-level":
            assert set(forged) == {"$.decision", "$.pass"}
        else:
            assert all(path.startswith("$.evidence[") for path in forged)
        stripped = {
            k: v for k, v in assessment.items() if k not in ("decision", "pass", "evidence")
        }
        assert_valid(stripped, ASSESSMENT)


@pytest.mark.needs_definitions
async def test_freshness_forgeries_are_schema_valid_but_wrong() -> None:
    for behavior in (
        "stale-baseline",
        "wrong-changeset-digest",
        "unread-blob",
        "wrong-config-digest",
    ):
        async with fake(behavior) as host:
            await host.start()
            request = params(host)
            assessment = await host.evaluate(request)
            assert_valid(assessment, ASSESSMENT)
            valid_as_of = assessment["validAsOf"]
            if behavior == "stale-baseline":
                assert valid_as_of["baseline"] != request["changeset"]["baseline"]  # type: ignore[index]
            elif behavior == "wrong-changeset-digest":
                assert valid_as_of["changesetDigest"] != changeset_digest(request["changeset"])
            elif behavior == "unread-blob":
                assert UNREAD_BLOB in valid_as_of["blobs"] and UNREAD_BLOB not in host.reads
            else:
                expected = config_digest("asp-fake-provider", "check/1.0", {})
                assert assessment["provider"]["configDigest"] != expected


@pytest.mark.needs_definitions
async def test_version_refusal_and_exact_negotiation() -> None:
    async with fake("version-refusal") as host:
        with pytest.raises(AspError) as refused:
            await host.initialize()
        assert refused.value.code == -32014 and refused.value.fail_class == "contract"
    async with provider_host(
        FAKE, "--behavior", "clean", "--protocol", "asp/0.1", files=FILES
    ) as host:
        with pytest.raises(AspError) as skew:
            await host.initialize("asp/1.0")
        assert skew.value.code == -32014
        result = await host.initialize("asp/0.1")
        # the 0.1 dialect as recorded in the field: not a v1 capability block ...
        assert schema_errors(result, "initialize.schema.json#/$defs/result")
        assert "rules" in result["capabilities"]["check"]
        await host.initialized()
        raw = await host.evaluate(params(host, callSite="gate", checks=["fake.lines"]))
        assert "durationMs" in raw["timing"] and schema_errors(raw, ASSESSMENT)
        # ... which the host's profile maps to schema-valid v1 (tests/host/test_compat_v01.py)
        profile = LegacyProfile()
        CheckCapability.model_validate(profile.map_capability(result["capabilities"]["check"]))
        assert_valid(profile.map_assessment(raw)[0], ASSESSMENT)


async def test_crash_on_initialize_exits_with_status_3() -> None:
    async with fake("crash-initialize") as host:
        with pytest.raises(ConnectionClosed):
            await host.initialize()
        assert await wait_exit(host.process) == CRASH_STATUS


async def test_crash_mid_evaluate_after_reading_exits_with_status_3() -> None:
    async with fake("crash-evaluate") as host:
        await host.start()
        with pytest.raises(ConnectionClosed):
            await host.evaluate(params(host))
        assert host.reads, "the crash happens mid-evaluate, after the provider read content"
        assert await wait_exit(host.process) == CRASH_STATUS


@pytest.mark.needs_definitions
async def test_hang_never_answers_and_honours_cancel_request() -> None:
    async with fake("hang") as host:
        await host.start()
        with pytest.raises(RequestTimeout):
            await host.evaluate(params(host), timeout=0.5)
        # the timed-out request was cancelled with $/cancelRequest; the provider keeps serving
        assert host.process.returncode is None
    async with fake("hang", "--hang-seconds", "0.2") as host:
        await valid_assessment(host)


async def test_rpc_error_is_typed_health_failure() -> None:
    async with fake("rpc-error") as host:
        await host.start()
        with pytest.raises(AspError) as failure:
            await host.evaluate(params(host))
        assert failure.value.fail_class == "health" and failure.value.code == -32603


@pytest.mark.needs_definitions
async def test_slow_progress_reports_three_times_before_the_clean_result() -> None:
    async with fake("slow-progress") as host:
        await valid_assessment(host)
        reports = [v for v in host.progress if v.get("kind") == "report"]
        assert len(reports) >= 3
        for value in reports:
            assert_valid({"token": 1, "value": value}, "progress.schema.json#/$defs/params")


@pytest.mark.needs_definitions
async def test_initialize_shape_behaviours() -> None:
    async with fake("malformed-initialize") as host:
        assert schema_errors(await host.initialize(), "initialize.schema.json#/$defs/result")
    async with fake("no-check-capability") as host:
        result = await host.initialize()
        assert_valid(result, "initialize.schema.json#/$defs/result")
        assert "check" not in result["capabilities"] and result["capabilityFamilies"] == ["inspect"]
    async with fake("requests-write") as host:
        result = await host.initialize()
        assert_valid(result, "initialize.schema.json#/$defs/result")
        assert result["requestedPermissions"]["write"] is True


@pytest.mark.needs_definitions
async def test_read_out_of_grant_reports_the_host_refusal_in_evidence() -> None:
    async with fake("read-out-of-grant") as host:
        assessment = await valid_assessment(host)
        assert host.refused.get(OUT_OF_GRANT_PROBE) == 1
        [probe] = [
            e
            for e in assessment["evidence"]
            if e.get("data", {}).get("probe") == OUT_OF_GRANT_PROBE
        ]
        assert probe["data"]["refused"] is True and probe["data"]["code"] == -32012
        assert OUT_OF_GRANT_PROBE not in assessment["validAsOf"]["blobs"]


@pytest.mark.needs_definitions
async def test_configuration_fixtures_and_digest_identity() -> None:
    valid = load_json("fixtures/core/check-evaluate.configuration.valid.json")
    null = load_json("fixtures/core/check-evaluate.configuration.invalid.null.json")
    async with fake("clean") as host:
        assessment = await valid_assessment(host, valid)
        assert assessment["provider"]["configDigest"] == config_digest(
            "asp-fake-provider", "check/1.0", valid["configuration"]
        )
        with pytest.raises(AspError) as rejected:
            await host.evaluate(null)
        assert rejected.value.code == -32602 and rejected.value.fail_class == "input"
        with pytest.raises(AspError):
            await host.evaluate({**valid, "configuration": {"verify": {"unknown": 1}}})
        empty = await host.evaluate({**valid, "configuration": {}})
        omitted = await host.evaluate({k: v for k, v in valid.items() if k != "configuration"})
        assert empty["provider"]["configDigest"] == omitted["provider"]["configDigest"]


def test_behaviour_list_matches_the_contract() -> None:
    """25 protocol misbehaviours (two of them slow or stuck checks, tests/host/test_host_slow_check.py)
    plus 4 hostile-process ones (tests/host/test_host_confinement.py,
    tests/host_client/test_process_tree.py)."""
    assert len(BEHAVIORS) == 29 and len(set(BEHAVIORS)) == 29
