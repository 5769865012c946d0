"""Provider views and drafted answers kept between status-like requests (reference_host/status/
memo.py): reused while nothing they are made from changed, made again after any change that
alters them — a provider record's or session's state, the policy, the local override file, the
params. Every answer is compared with the one built from scratch in the same state."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from asp_protocol.framing import EncodedJson
from reference_host.cli import build_context
from reference_host.context import HostContext
from reference_host.status import results
from reference_host.status import snapshot as snapshot_module
from reference_host.status.results import (
    StatusLike,
    host_authority_status,
    host_capabilities,
    host_status,
    status_like_wire,
)
from reference_host.status.snapshot import snapshot, start_reading
from tests.host.test_host_status_guess import _unstamped, settled  # noqa: F401
from tests.support.gitrepo import git
from tests.support.host_scenarios import one_provider, prepare

PID = "fake-pass"


def _wire(ctx: HostContext, fn: StatusLike = host_status, params: Any = None) -> dict[str, Any]:
    """The answer as the server gives it (git started as the request is read), decoded."""

    async def main() -> dict[str, Any] | EncodedJson:
        return await status_like_wire(fn, ctx, params or {}, start_reading(ctx))

    answer = anyio.run(main)
    return json.loads(answer.data) if isinstance(answer, EncodedJson) else answer


def _fresh(ctx: HostContext, fn: StatusLike = host_status, params: Any = None) -> dict[str, Any]:
    """The same answer with views made now in this thread (never kept, never reused)."""
    return fn(ctx, params or {}, snapshot(ctx))


@pytest.fixture
def ctx(tmp_path: Path) -> HostContext:
    repo, trusted, _ = prepare(tmp_path, one_provider("pass"))
    (repo / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")  # dirty
    return build_context(repo, trusted, "advisory")


def _session(**state: Any) -> Any:
    """A stand-in for a provider session: what status reads of one."""
    fields = {"alive": True, "state": "active", "protocol_version": "asp/1.0", "profile": None}
    return SimpleNamespace(**{**fields, **state}, stderr_excerpt=lambda: "")


def _attach(record: Any, **state: Any) -> None:
    record.session = record.sessions["check"] = _session(**state)
    record.launched = True


def _launched(record: Any) -> None:
    record.launched = True


def _attached(record: Any) -> None:
    _attach(record)


def _nothing(record: Any) -> None:
    pass


def _set(**values: Any) -> Any:
    def change(record: Any) -> None:
        for name, value in values.items():
            setattr(record, name, value)

    return change


def _session_set(**values: Any) -> Any:
    def change(record: Any) -> None:
        for name, value in values.items():
            setattr(record.session, name, value)

    return change


#: (the record before, one change of one thing status reads)
CHANGES = {
    "quarantined": (_nothing, _set(quarantined=True)),
    "launched": (_nothing, _set(launched=True)),
    "failures": (_launched, _set(failures=1)),
    "last reason": (_launched, _set(last_reason="timed-out")),
    "last detail": (_set(launched=True, last_reason="timed-out"), _set(last_detail="again")),
    "lifecycle": (_nothing, _set(lifecycle="timed-out")),
    "session attached": (_nothing, _attach),
    "session state": (_attached, _session_set(state="shutting-down")),
    "session ended": (_attached, _session_set(alive=False)),
    "another session": (_attached, lambda record: record.sessions.update(inspect=_session())),
    "manifest gone": (_nothing, _set(installed=None)),
}


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("fn", [host_status, host_capabilities, host_authority_status])
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_provider_state_change_between_two_statuses_shows_in_the_second(
    ctx: HostContext, fn: StatusLike, change: str
) -> None:
    record = ctx.supervisor.record(PID)
    setup, changed = CHANGES[change]
    setup(record)
    for _ in range(2):
        before = _wire(ctx, fn)
    assert _unstamped(before) == _unstamped(_fresh(ctx, fn))
    changed(record)
    after = _wire(ctx, fn)
    assert _unstamped(after) != _unstamped(before), "the change alters the answer"
    assert _unstamped(after) == _unstamped(_fresh(ctx, fn))
    assert _unstamped(_wire(ctx, fn)) == _unstamped(after)


@pytest.mark.usefixtures("settled")
def test_a_crashed_providers_growing_stderr_shows_in_every_status(ctx: HostContext) -> None:
    """Its lifecycle detail ends with the provider's stderr, which grows with nothing in the
    record to show it: such views are never kept."""
    record = ctx.supervisor.record(PID)
    written = ["boom"]
    _attach(record, alive=False)
    record.session.stderr_excerpt = lambda: written[-1]
    record.last_reason, record.last_detail = "crashed", "provider exited during check/evaluate"
    for text in ("boom", "boom, and more"):
        written.append(text)
        detail = _wire(ctx)["servers"][0]["detail"]
        assert f"\n{text}; grant:" in detail, detail


@pytest.mark.usefixtures("settled")
def test_a_local_override_added_or_removed_between_two_statuses_shows_in_the_second(
    ctx: HostContext,
) -> None:
    override = ctx.workspace.root / ".asp" / "local.json"
    for present in (False, True, True, False):
        if present:
            override.write_text("{}\n")
        elif override.exists():
            override.unlink()
        answer = _wire(ctx)
        assert answer["policy"]["localOverride"]["present"] is present
        assert _unstamped(answer) == _unstamped(_fresh(ctx))


@pytest.mark.usefixtures("settled")
def test_a_policy_committed_between_two_statuses_shows_in_the_second(ctx: HostContext) -> None:
    repo = ctx.workspace.root
    before = [_wire(ctx) for _ in range(2)][-1]
    policy = json.loads((repo / ".asp" / "asp.json").read_text())
    policy["requirements"][0]["assurance"] = ["gated"]  # the host runs advisory: degraded
    (repo / ".asp" / "asp.json").write_text(json.dumps(policy, indent=2) + "\n")
    git(repo, "commit", "-qam", "gated only")
    for _ in range(2):
        after = _wire(ctx)
        assert after["policy"]["policyDigest"] != before["policy"]["policyDigest"]
        assert after["gates"] != before["gates"]
        assert _unstamped(after) == _unstamped(_fresh(ctx))


@pytest.mark.usefixtures("settled")
def test_params_and_stamps_are_each_requests_own(ctx: HostContext) -> None:
    first, second = _wire(ctx, params={"a": 1}), _wire(ctx, params={"a": 1})
    other = _wire(ctx, params={"a": True})  # equal in Python, not on the wire
    assert first["receipt"]["requestDigest"] == second["receipt"]["requestDigest"]
    assert other["receipt"]["requestDigest"] != first["receipt"]["requestDigest"]
    assert _unstamped(other) == _unstamped(_fresh(ctx, params={"a": True}))
    ids = [answer["receipt"]["receiptId"] for answer in (first, second, other)]
    assert len(set(ids)) == 3 and all(i.startswith("status-") for i in ids)
    counters = [int(i.rsplit("-", 1)[1]) for i in ids]
    assert counters == sorted(counters)


@pytest.mark.usefixtures("settled")
def test_while_nothing_changes_the_views_and_the_draft_are_made_once(
    ctx: HostContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []

    def counted(name: str, fn: Any) -> Any:
        def call(*args: Any) -> Any:
            made.append(name)
            return fn(*args)

        return call

    monkeypatch.setattr(
        snapshot_module, "_make_views", counted("views", snapshot_module._make_views)
    )
    monkeypatch.setattr(results, "template", counted("draft", results.template))
    _wire(ctx)  # no earlier reading: nothing guessed, views made (and kept) after git
    assert made == ["views"]
    answers = [_wire(ctx) for _ in range(3)]
    assert made == ["views", "draft"], "the draft made for the first guess, then both kept"
    assert len({json.dumps(_unstamped(a), sort_keys=True) for a in answers}) == 1
