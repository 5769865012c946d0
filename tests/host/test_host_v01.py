"""A provider answering in the recorded asp/0.1 dialect gets real decisions behind the real host.

`asp-fake-provider --protocol asp/0.1` sends the shapes recorded in the field (capability block,
timing, 1-based positions, `checks` selection, ignored `baselineChanged`, -32601 on shutdown); the
trusted manifest negotiates asp/0.1 and a trusted `provider-settings.json` selects its checks.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.gitrepo import git
from tests.support.host_checks import server
from tests.support.host_pool import HostPool
from tests.support.host_scenarios import REQ, HostConfig, one_provider

EDIT = {"src/app.py": "def add(a, b):\n    return a + b + 0\n"}
CHECKS = ("fake.lines",)


def legacy(behavior: str, checks: tuple[str, ...] | None = CHECKS, **kw: Any) -> Any:
    settings = (("checks", checks),) if checks is not None else ()
    return one_provider(
        behavior,
        id=f"legacy-{behavior}",
        protocol="asp/0.1",
        manifest_protocols=("asp/0.1",),
        settings=settings,
        **kw,
    )


def _notes(result: dict[str, Any]) -> str:
    detail = result["assurance"].get("detail", "")
    assert result["receipt"]["assurance"]["detail"] == detail, "the receipt binds the same notes"
    return str(detail)


@pytest.mark.parametrize("call_site", ["interactive", "gate"])
def test_clean_change_is_allowed_with_authority_and_says_it_was_mapped(
    pool: HostPool, call_site: str
) -> None:
    hut = pool.get(legacy("clean"))
    result = hut.evaluate(call_site, hut.changeset(EDIT))
    assert result["decision"] == "allow", result["coverage"]
    assert result["coverage"]["ran"] == [REQ]
    assert [e["authority"]["granted"] for e in result["authorityEvidence"]] == [True]
    notes = _notes(result)
    assert "legacy-clean: " in notes and "mapped to v1" in notes
    assert "configuration identity not verifiable" in notes
    assert "checks fake.lines" in notes and "settings sha256:" in notes


def test_bad_change_is_denied_with_its_blocking_finding(pool: HostPool) -> None:
    hut = pool.get(legacy("finding"))
    result = hut.evaluate("gate", hut.changeset(EDIT))
    assert result["decision"] == "deny", result["coverage"]
    gating = [f for f in result["findings"] if f["disposition"] == "gating"]
    assert len(gating) == 1 and gating[0]["authority"]["authority"]["granted"] is True
    diagnostic = gating[0]["diagnostic"]
    assert diagnostic["code"] == "legacy-finding/fake.lines/E1"
    # the provider's 1-based {line: 1, column: 1} became zero-based {line: 0, char: 0}
    assert diagnostic["location"]["range"]["start"] == {"line": 0, "char": 0}
    assert "1-based position" in _notes(result)


def test_an_introduced_request_asks_an_all_only_provider_for_all_and_says_so(
    pool: HostPool,
) -> None:
    """Recorded asp/0.1 providers offer comparison `all` only: an `introduced` request (an
    apply's validation asks one) gets their stricter answer, never an unsupported one."""
    hut = pool.get(legacy("finding"))
    result = hut.evaluate("gate", hut.changeset(EDIT), comparison="introduced")
    assert result["decision"] == "deny", result["coverage"]
    assert [f["disposition"] for f in result["findings"]] == ["gating"]
    assert "so it was asked all and findings already in the touched files count" in _notes(result)


def test_without_a_check_selection_the_request_is_unsupported_and_says_why(
    pool: HostPool,
) -> None:
    hut = pool.get(legacy("clean", checks=None))
    result = hut.evaluate("gate", hut.changeset(EDIT))
    assert result["decision"] == "indeterminate"
    entry = next(d for d in result["coverage"]["degraded"] if d["reason"] == "unsupported")
    assert "[untrusted, capped]" in entry["detail"] and "repo.layout" in entry["detail"]


def test_selection_that_does_not_fit_the_change_is_incomplete(pool: HostPool) -> None:
    hut = pool.get(legacy("clean", checks=("fake.lines", "python.syntax")))
    result = hut.evaluate("gate", hut.changeset({"docs/notes.txt": "changed\n"}))
    assert result["decision"] == "indeterminate"
    entry = next(d for d in result["coverage"]["degraded"] if d["reason"] == "incomplete")
    assert "No Python-owned files" in entry["detail"]


def test_unknown_selected_check_is_unsupported_before_the_provider_refuses(
    pool: HostPool,
) -> None:
    hut = pool.get(legacy("clean", checks=("fake.nonexistent",)))
    result = hut.evaluate("gate", hut.changeset(EDIT))
    assert result["decision"] == "indeterminate"
    entry = next(d for d in result["coverage"]["degraded"] if d["reason"] == "unsupported")
    assert "fake.nonexistent" in entry["detail"]


def test_a_changing_config_digest_in_one_session_is_malformed(pool: HostPool) -> None:
    hut = pool.get(legacy("wrong-config-digest"), fresh=True)
    first = hut.evaluate("gate", hut.changeset(EDIT))
    assert first["decision"] == "allow", "the first opaque digest is accepted"
    second = hut.evaluate("gate", hut.changeset({"src/app.py": "X = 2\n"}))
    assert second["decision"] == "indeterminate"
    entry = next(d for d in second["coverage"]["degraded"] if d["reason"] == "malformed")
    assert "changed within the session" in entry["detail"]


def test_status_shows_protocol_and_settings_and_baseline_moves_restart(pool: HostPool) -> None:
    hut = pool.get(legacy("clean"), fresh=True)
    assert hut.evaluate("gate", hut.changeset(EDIT))["decision"] == "allow"
    for result, key in ((hut.status(), "servers"), (hut.authority_status(), "providers")):
        detail = server(result, "legacy-clean", key)["detail"]
        assert "check session negotiated asp/0.1 (asp/0.1 compatibility profile)" in detail
        assert "settings sha256:" in detail and "checks fake.lines" in detail
    # commit: the provider would keep listing the old baseline, so the host restarts it
    git(hut.repo, "commit", "-qam", "move the baseline")
    hut._rev = None
    again = hut.evaluate("gate", hut.changeset({"src/app.py": "Y = 3\n"}))
    assert again["decision"] == "allow", again["coverage"]
    assert hut.stop() == 0, "ending a 0.1 session (-32601 on shutdown) leaves the host clean"
    logs = hut.host.stderr_text()
    assert "legacy-clean" not in logs and "Traceback" not in logs, "ended quietly: " + logs[-2000:]


BUILTIN = "asp-python-check"
UNDEFINED = {"src/uses_undefined.py": "print(undefined_name)\n"}


def _builtin(settings: str) -> HostConfig:
    return HostConfig(with_policy=False, trusted_settings=((BUILTIN, settings),))


def test_builtin_provider_takes_its_configuration_from_trusted_settings(pool: HostPool) -> None:
    settings = json.dumps({"configuration": {"disabledRules": ["python/undefined-name"]}})
    hut = pool.get(_builtin(settings))
    result = hut.evaluate("gate", hut.changeset(UNDEFINED))
    # the rule is off, and the provider's configDigest matched the configuration the host sent
    assert result["decision"] == "allow", result["coverage"]
    assert "configuration keys disabledRules" in _notes(result)
    detail = server(hut.status(), BUILTIN)["detail"]
    assert "settings sha256:" in detail and "negotiated asp/1.0" in detail


def test_bad_trusted_settings_fail_closed_naming_the_key(pool: HostPool) -> None:
    hut = pool.get(_builtin(json.dumps({"configuration": {}, "chekcs": ["x"]})))
    result = hut.evaluate("gate", hut.changeset(UNDEFINED))
    assert result["decision"] == "indeterminate"
    entry = next(d for d in result["coverage"]["degraded"] if d["source"] == BUILTIN)
    assert "provider-settings.json: unknown key 'chekcs'" in entry["detail"]
