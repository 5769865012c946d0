"""`host/status`, `host/capabilities` and `host/authority/status` read one per-request view of
each provider (reference_host/status/providers.py): each pin is checked against the trusted
manifest once per request, however many gates, families and receipts show its result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import reference_host.context
from reference_host.cli import build_context
from reference_host.status.results import host_authority_status, host_capabilities, host_status
from reference_host.trust.manifests import check_pin
from tests.support.definitions import assert_valid
from tests.support.gitrepo import make_repo

RESULTS = {
    "status": (host_status, "outer-host.schema.json#/$defs/statusResult"),
    "capabilities": (host_capabilities, "outer-host.schema.json#/$defs/capabilitiesResult"),
    "authority": (host_authority_status, "outer-host.schema.json#/$defs/authorityStatusResult"),
}


@pytest.mark.needs_definitions
@pytest.mark.parametrize("name", sorted(RESULTS))
def test_each_pin_is_checked_once_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    ctx = build_context(make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n"}), None, "advisory")
    calls: list[str] = []

    def counting(pin: Any, installed: Any) -> Any:
        calls.append(pin.id)
        return check_pin(pin, installed)

    monkeypatch.setattr(reference_host.context, "check_pin", counting)
    handler, ref = RESULTS[name]
    result = handler(ctx, {})
    assert_valid(result, ref)
    # The built-in default policy pins two providers: python-check (every call-site) and the
    # edit requirement python-edit (in no gate); each pin is checked once.
    assert sorted(calls) == ["asp-python-check", "asp-python-edit"]
