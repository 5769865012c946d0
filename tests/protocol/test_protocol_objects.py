"""Canonical digests, the error registry and the object models, checked against the official bundle."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from pydantic import ValidationError

from asp_protocol.canonical import blob_id, canonical_json, changeset_digest, digest, request_digest
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.host_owned import find_host_owned_fields
from asp_protocol.models import Assessment, ChangeSet, DecisionEnvelope, StatusResult
from tests.support.definitions import load_json, schema_errors


def strip_fixture_keys(document: dict[str, Any]) -> dict[str, Any]:
    """Fixture files carry `validates` and `//` keys that are not wire fields."""
    return {k: v for k, v in document.items() if k not in ("validates", "//", "$schema")}


def test_canonical_json_sorts_keys_keeps_utf8_and_integers() -> None:
    assert (
        canonical_json({"b": 1, "a": {"d": [2, 1], "c": "é"}}) == '{"a":{"c":"é","d":[2,1]},"b":1}'
    )
    assert canonical_json({"n": 10}) == '{"n":10}'


def test_digests_are_sha256_of_the_canonical_form() -> None:
    value = {"z": 1, "a": "ü"}
    expected = hashlib.sha256('{"a":"ü","z":1}'.encode()).hexdigest()
    assert digest(value) == f"sha256:{expected}"
    assert digest({"a": "ü", "z": 1}) == digest(value)
    assert request_digest("host/status", {}) == digest({"method": "host/status", "params": {}})
    assert blob_id(b"print(1)\n") == "blob:sha256:" + hashlib.sha256(b"print(1)\n").hexdigest()


def test_changeset_digest_changes_with_any_field() -> None:
    base = {"baseline": {"rev": "git:tree:1"}, "changes": []}
    other = {"baseline": {"rev": "git:tree:2"}, "changes": []}
    assert changeset_digest(base) != changeset_digest(other)


@pytest.mark.needs_definitions
def test_error_registry_carries_fail_class_and_round_trips() -> None:
    for member, fail_class in [
        (ErrorCode.HEALTH_NOT_READY, "health"),
        (ErrorCode.STALE_BASELINE, "health"),
        (ErrorCode.SCOPE_DENIED, "policy"),
        (ErrorCode.INVALID_CHANGESET, "input"),
        (ErrorCode.UNSUPPORTED_VERSION, "contract"),
        (ErrorCode.BLOB_UNAVAILABLE, "health"),
        (ErrorCode.CANCELLED, "health"),
        (ErrorCode.INVALID_PARAMS, "input"),
    ]:
        wire = AspError(member, "x").to_wire()
        assert wire["data"]["failClass"] == fail_class
        assert not schema_errors(wire, "error.schema.json")
        again = AspError.from_wire(wire)
        assert (again.code, again.fail_class) == (member.code, fail_class)


def test_malformed_error_objects_still_become_typed_errors() -> None:
    error = AspError.from_wire({"message": "no code"})
    assert error.fail_class == "contract" and error.code == -32603
    assert (
        AspError.from_wire({"code": -32015, "message": "m", "data": "junk"}).fail_class == "health"
    )


@pytest.mark.needs_definitions
def test_official_example_changesets_parse_and_bad_ones_are_refused() -> None:
    request = load_json("examples/check/evaluate.request.json")
    ChangeSet.model_validate(request["params"]["changeset"])
    with pytest.raises(ValidationError):
        ChangeSet.model_validate(
            {"baseline": {"rev": "r"}, "changes": [{"path": "a", "kind": "modify"}]}
        )
    with pytest.raises(ValidationError):
        ChangeSet.model_validate({"baseline": {"rev": "r"}, "changes": [], "extra": 1})


@pytest.mark.needs_definitions
def test_valid_assessment_fixture_parses_and_host_owned_fixtures_are_caught() -> None:
    valid = strip_fixture_keys(load_json("fixtures/core/check-assessment.valid.complete.json"))
    Assessment.model_validate(valid)
    assert find_host_owned_fields(valid) == []
    for name in ("host-owned-top-level", "host-owned-nested"):
        forged = strip_fixture_keys(
            load_json(f"fixtures/core/check-assessment.invalid.{name}.json")
        )
        assert find_host_owned_fields(forged), name
        assert schema_errors(forged, "check-assessment.schema.json"), name


@pytest.mark.needs_definitions
def test_outer_examples_parse_with_the_client_models() -> None:
    envelope = load_json("examples/core/evaluate.deny.json")["result"]
    parsed = DecisionEnvelope.model_validate(envelope)
    assert parsed.decision == "deny" and parsed.pass_ is False
    status = load_json("examples/core/status.ready.json")["result"]
    assert StatusResult.model_validate(status).host.state in ("ready", "degraded")


@pytest.mark.needs_definitions
def test_decision_envelope_rejects_pass_that_contradicts_decision() -> None:
    envelope = json.loads(json.dumps(load_json("examples/core/evaluate.deny.json")["result"]))
    envelope["pass"] = True
    with pytest.raises(ValidationError):
        DecisionEnvelope.model_validate(envelope)
