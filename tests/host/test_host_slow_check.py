"""A check provider that is slow, not hung (reference_host/sessions/building.py): a deadline hit
while its progress keeps changing is not counted toward quarantine and keeps the session, so what
it finished is kept; one that only repeats itself is quarantined as before.

Found on Django 5.2: three evaluations at call-site interactive of a change touching all 2,823
modules each ran the Python check into its 10 s budget, and the third quarantined it for the life
of the host (every later evaluation, of any size, was then `indeterminate: quarantined`).
"""

from __future__ import annotations

from tests.support.host_checks import named, reasons, server
from tests.support.host_pool import HostPool
from tests.support.host_scenarios import one_provider

# the budget covers the provider's launch and initialize too: at load 5 its imports alone took
# over 1 s, and a timed-out initialize is a counted timeout, not the slow work under test
LAUNCH_SLACK_MS = 3000


def test_a_check_that_keeps_working_is_never_quarantined(pool: HostPool) -> None:
    hut = pool.get(one_provider("keeps-working", budget_ms=LAUNCH_SLACK_MS), fresh=True)
    changeset = hut.changeset({"src/slow.py": "S = 1\n"})
    for _ in range(4):  # more than the quarantine threshold
        result = hut.evaluate("gate", changeset)
        assert result["decision"] == "indeterminate"
        entry = named(result, "timed-out", "fake-keeps-working")
        assert "working (" in entry["detail"] and "not counted" in entry["detail"], entry
        assert "quarantined" not in reasons(result)
        state = server(hut.status(), "fake-keeps-working")
        assert state["lifecycleState"] == "active", "the session is kept, not killed"


def test_a_check_repeating_one_progress_message_is_still_quarantined(pool: HostPool) -> None:
    hut = pool.get(one_provider("repeats-progress", budget_ms=LAUNCH_SLACK_MS), fresh=True)
    changeset = hut.changeset({"src/stuck.py": "S = 1\n"})
    for _ in range(3):
        named(hut.evaluate("gate", changeset), "timed-out", "fake-repeats-progress")
        state = server(hut.status(), "fake-repeats-progress")
        assert state["lifecycleState"] != "active", "a hung session is killed"
    result = hut.evaluate("gate", changeset)
    assert result["decision"] == "indeterminate"
    named(result, "quarantined", "fake-repeats-progress")
