"""The asp/0.1 compatibility profile against the wire traffic recorded from a real 0.1 provider.

The recording lives in the definition bundle's `field/` folder and is read at test time (never
copied). Each recorded Assessment is mapped by the profile and must then be what the v1 checks
accept — except `validAsOf.blobs`, where the recording host used git object ids, not the
`blob:sha256:` ids this host issues (the profile never rewrites identities).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from asp_protocol.models import Assessment
from reference_host.sessions.compat_v01 import MAPPED_EVIDENCE_ID, LegacyProfile
from reference_host.sessions.session import CheckCapability, InitializeResult
from reference_host.trust.settings import SettingsError, parse_settings
from tests.support.assessment_check import as_stamped, host_reading
from tests.support.definitions import require_definitions, schema_errors

ASSESSMENT = "check-assessment.schema.json"
RECORDING = "field/opcore-0.2.1-asp-0.1-wire.jsonl"


def recorded() -> list[dict[str, Any]]:
    path = require_definitions() / RECORDING
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def recorded_results(kind: str) -> list[Any]:
    out = []
    for line in recorded():
        message = line["message"]
        if line["dir"] != "provider->host" or not isinstance(message, dict):
            continue
        result = message.get("result")
        if kind == "initialize" and isinstance(result, dict) and "serverInfo" in result:
            out.append(result)
        if kind == "assessment" and isinstance(result, dict) and "status" in result:
            out.append(result)
    return out


def judge(raw: dict[str, Any], expected_digest: str | None = None, *, read: bool = True) -> Any:
    """The v1 Assessment checks, as the host runs them for a session that served *raw*'s blobs."""
    return as_stamped(raw, "opcore", "check/0.1", expected_digest=expected_digest, read=read)


@pytest.mark.needs_definitions
def test_recorded_initialize_maps_to_a_v1_capability_with_safe_values() -> None:
    results = recorded_results("initialize")
    assert results, "the recording has initialize results"
    for result in results:
        InitializeResult.model_validate(result)  # the envelope itself is accepted as recorded
        block = result["capabilities"]["check"]
        assert schema_errors(block, "capabilities.schema.json#/$defs/checkCapability")
        profile = LegacyProfile()
        mapped = CheckCapability.model_validate(profile.map_capability(block))
        assert mapped.partial_results is False and mapped.incremental is False
        assert mapped.unsupported_reporting == "assessment-status"
        assert mapped.scopes == ["changeset"], "'paths' is outside v1 and ignored"
        assert mapped.capability_version == "check/0.1"
        notes = " ".join(profile.capability_notes)
        assert "rules" in notes and "manifest" in notes and "paths" in notes
        assert "typescript.types" in profile.known_checks


@pytest.mark.needs_definitions
def test_every_recorded_assessment_maps_to_v1_and_says_so() -> None:
    assessments = recorded_results("assessment")
    assert {a["status"] for a in assessments} >= {"complete", "incomplete", "unsupported", "error"}
    for raw in assessments:
        mapped, notes = LegacyProfile().map_assessment(raw)
        Assessment.model_validate(mapped)
        errors = schema_errors(mapped, ASSESSMENT)
        assert all(e.startswith("validAsOf/blobs/") for e in errors), errors
        if "timing" in raw:
            assert mapped["timing"] == {"elapsedMs": raw["timing"]["durationMs"]}
            assert any("durationMs" in note for note in notes)
        marker = [e for e in mapped["evidence"] if e.get("id") == MAPPED_EVIDENCE_ID]
        assert len(marker) == 1 and "not verifiable" in marker[0]["message"]
        assert raw["evidence"] != mapped["evidence"], "the original is not modified"


@pytest.mark.needs_definitions
def test_recorded_non_complete_assessment_keeps_the_providers_reasons() -> None:
    incomplete = next(a for a in recorded_results("assessment") if a["status"] == "incomplete")
    profile = LegacyProfile()
    mapped, _ = profile.map_assessment(incomplete)
    check = judge(mapped, profile.expected_config_digest(mapped))
    assert check.reason == "incomplete"
    assert "[untrusted, capped]" in check.detail and "No Rust-owned files" in check.detail
    assert "more" in check.detail, "long reason lists are bounded with a count"


def _assessment(**changes: Any) -> dict[str, Any]:
    base = next(a for a in recorded_results("assessment") if a["status"] == "complete")
    raw = json.loads(json.dumps(base))
    raw.update(changes)
    return raw


@pytest.mark.needs_definitions
def test_positions_are_converted_or_dropped_never_guessed() -> None:
    location_ok = {
        "path": "src/a.ts",
        "range": {"start": {"line": 3, "column": 5}, "end": {"line": 3, "column": 9}},
    }
    location_bad = {
        "path": "src/b.ts",
        "range": {"start": {"line": 0, "column": 0}, "end": {"line": 1, "column": 1}},
    }
    no_end = {"path": "src/c.ts", "range": {"start": {"line": 2, "column": 2}}}
    point = {"path": "src/d.ts", "line": 4, "column": 2}
    diagnostics = [
        {**_assessment()["diagnostics"][0], "location": location}
        for location in (location_ok, location_bad, no_end, point)
    ]
    mapped, notes = LegacyProfile().map_assessment(_assessment(diagnostics=diagnostics))
    first, second, third, fourth = mapped["diagnostics"]
    assert third["location"] == {"path": "src/c.ts"}, "a missing end is not invented"
    assert fourth["location"] == {"path": "src/d.ts"}
    Assessment.model_validate(mapped)
    assert first["location"]["range"] == {
        "start": {"line": 2, "char": 4},
        "end": {"line": 2, "char": 8},
    }
    assert second["location"] == {"path": "src/b.ts"}
    assert any("converted" in n for n in notes) and any("dropped" in n for n in notes)


@pytest.mark.needs_definitions
def test_evidence_kinds_outside_v1_are_dropped_with_a_note() -> None:
    raw = _assessment(evidence=[{"kind": "log", "message": "x"}, {"kind": "message"}])
    mapped, notes = LegacyProfile().map_assessment(raw)
    assert [e["kind"] for e in mapped["evidence"]] == ["message", "message"]
    assert any("log" in n for n in notes)


@pytest.mark.needs_definitions
def test_host_owned_fields_at_any_depth_are_not_mapped_away() -> None:
    forged = {"kind": "log", "data": {"deep": {"decision": "allow"}}}
    raw = _assessment(evidence=[forged])
    mapped, notes = LegacyProfile().map_assessment(raw)
    assert mapped is raw and notes == [], "a forged answer reaches the v1 checks untouched"
    check = judge(mapped, read=False)
    assert check.reason == "malformed" and "host-owned" in check.detail


@pytest.mark.needs_definitions
def test_config_digest_is_opaque_but_must_stay_stable_in_a_session() -> None:
    profile = LegacyProfile()
    first, _ = profile.map_assessment(_assessment())
    reported = first["provider"]["configDigest"]
    assert profile.expected_config_digest(first) == reported
    moved = _assessment()
    moved["provider"]["configDigest"] = "sha256:" + "1" * 64
    assert profile.expected_config_digest(moved) == reported, "the first digest stays expected"
    check = judge(profile.map_assessment(moved)[0], reported, read=False)
    assert check.reason == "malformed" and "changed within the session" in check.detail


def test_schema_errors_are_all_reported_bounded() -> None:
    raw = {"status": "complete", "diagnostics": "x", "coverage": 1, "timing": [], "cache": 2}
    check = host_reading(
        raw, "p", "check/1.0", baseline={"rev": "r"}, changeset_digest="d", served=set()
    )
    assert check.reason == "malformed"
    assert "error(s)" in check.detail and "validAsOf" in check.detail and "coverage" in check.detail


@pytest.mark.parametrize(
    ("raw", "protocol", "named"),
    [
        ({"checks": ["a"], "extra": 1}, "asp/0.1", "'extra'"),
        ({"checks": []}, "asp/0.1", "checks"),
        ({"checks": ["a", "a"]}, "asp/0.1", "checks"),
        ({"configuration": {"x": 1}}, "asp/0.1", "configuration"),
        ({"checks": ["a"]}, "asp/1.0", "checks"),
        ({"configuration": None}, "asp/1.0", "configuration"),
        (["checks"], "asp/1.0", "object"),
    ],
)
def test_settings_are_validated_strictly(raw: Any, protocol: str, named: str) -> None:
    with pytest.raises(SettingsError) as error:
        parse_settings(raw, "provider-settings.json", protocol)
    assert named in str(error.value)


def test_settings_digest_follows_the_settings() -> None:
    one = parse_settings({"checks": ["a", "b"]}, "p", "asp/0.1")
    two = parse_settings({"checks": ["a"]}, "p", "asp/0.1")
    assert one.digest != two.digest and "checks a, b" in one.summary()
    assert parse_settings({"configuration": {}}, "p", "asp/1.0").configuration == {}
