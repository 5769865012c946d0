"""NaN and ±Infinity in `.asp/asp.json` make a rejected policy with a reason, never an internal
error: Python's json would accept them, and then every digest of the document would fail."""

from __future__ import annotations

import pytest

from reference_host.trust.policy import parse_policy


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_numbers_reject_the_policy_with_a_reason(constant: str) -> None:
    policy = parse_policy(
        b'{"aspVersion": "asp/1.0", "budgets": {"gateMs": %s}}' % constant.encode()
    )
    assert policy.activation == "rejected"
    assert policy.error is not None and constant.lstrip("-") in policy.error
    assert policy.digest.startswith("sha256:")  # digested from the bytes, not the document
