"""Bad input to the real host (issue 2 item 6): a typed error every time, and the host keeps serving.

Raw bytes go straight to the host's stdin; answers the client endpoint cannot route (id null, or
the string ids used here) are read from the harness tap. After each case the host must still
answer `host/status`, and the work tree must be byte-identical.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from tests.support.host_harness import processes_with_arg
from tests.support.host_pool import HostPool, HostUnderTest
from tests.support.host_scenarios import one_provider

SHARED = one_provider("clean")
TWENTY_MB = 20 * 1024 * 1024


@pytest.fixture
def hut(pool: HostPool) -> Iterator[HostUnderTest]:
    shared = pool.get(SHARED)
    shared.host.clear_kept()
    yield shared
    pool.end_test()
    assert shared.status()["host"]["state"] in ("ready", "degraded"), "the host keeps serving"
    shared.verify_tree()


def error_of(message: dict[str, Any], code: int, fail_class: str | None = None) -> dict[str, Any]:
    assert "error" in message and "result" not in message, message
    error = message["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str)
    if fail_class is not None:
        assert error["data"]["failClass"] == fail_class, error
    return error


def raw_roundtrip(hut: HostUnderTest, key: str, method: str, params: Any) -> dict[str, Any]:
    hut.host.raw_request(key, method, params)
    return hut.host.wait_message(key)


def test_garbage_line(hut: HostUnderTest) -> None:
    hut.host.send_raw(b"this is not json at all\n")
    error_of(hut.host.wait_message(None), -32700, "contract")


def test_non_utf8_line(hut: HostUnderTest) -> None:
    hut.host.send_raw(b'\xff\xfe{"jsonrpc": \x80}\n')
    error_of(hut.host.wait_message(None), -32700)


def test_twenty_megabyte_line(hut: HostUnderTest) -> None:
    head = b'{"jsonrpc":"2.0","id":"huge","method":"host/status","params":{"pad":"'
    hut.host.send_raw(head + b"x" * TWENTY_MB + b'"}}\n')
    error_of(hut.host.wait_message(None, timeout=60), -32700)
    assert not hut.host.kept_messages("huge"), "an oversized request is never executed"


def test_not_a_jsonrpc_object(hut: HostUnderTest) -> None:
    hut.host.send_raw(b"[1, 2, 3]\n")
    error_of(hut.host.wait_message(None), -32600)
    hut.host.send_message({"id": "no-version", "method": "host/status"})
    error_of(hut.host.wait_message("no-version"), -32600)


def test_unknown_method(hut: HostUnderTest) -> None:
    error_of(raw_roundtrip(hut, "unknown-1", "host/noSuchMethod", {}), -32601)
    with pytest.raises(AspError) as raised:
        hut.call("workspace/writeFile", {"path": "x", "bytes": "y"})
    assert raised.value.code == -32601


def test_unknown_notification_gets_no_answer(hut: HostUnderTest) -> None:
    hut.host.send_message({"jsonrpc": "2.0", "method": "host/noSuchNotification", "params": {}})
    hut.status()
    assert hut.host.kept_messages(None) == [], "notifications are never answered"


@pytest.mark.parametrize(
    "params",
    [
        [],
        "gate",
        {"callSite": 5, "changeset": {"baseline": {"rev": "x"}, "changes": []}},
        {"callSite": "gate"},
        {"callSite": "gate", "changeset": "not an object"},
        {"callSite": "gate", "changeset": {"baseline": {"rev": "x"}, "changes": {}}},
        {"callSite": "gate", "changeset": {"changes": []}},
        {
            "callSite": "gate",
            "changeset": {"baseline": {"rev": "x"}, "changes": []},
            "timeoutMs": "soon",
        },
        {"callSite": "gate", "changeset": {"baseline": {"rev": "x"}, "changes": []}, "extra": 1},
        {
            "callSite": "gate",
            "changeset": {"baseline": {"rev": "x"}, "changes": []},
            "comparison": "resolved",
        },
    ],
    ids=[
        "list",
        "string",
        "callsite-int",
        "no-changeset",
        "changeset-string",
        "changes-object",
        "no-baseline",
        "timeout-string",
        "unknown-field",
        "comparison-resolved",
    ],
)
def test_wrong_param_types(hut: HostUnderTest, params: Any) -> None:
    answer = raw_roundtrip(hut, "wrong-types", "host/evaluateChangeset", params)
    assert answer["error"]["code"] in (-32602, -32013), answer
    assert answer["error"]["data"]["failClass"] == "input"


def test_unknown_call_site(hut: HostUnderTest) -> None:
    changeset = {"baseline": hut.baseline(), "changes": []}
    answer = raw_roundtrip(
        hut, "callsite", "host/evaluateChangeset", {"callSite": "commit", "changeset": changeset}
    )
    error_of(answer, -32602, "input")


@pytest.mark.parametrize(
    "path", ["../outside.py", "/etc/passwd", "src/../../outside.py", ".git/config", "src/\x00.py"]
)
def test_changeset_path_escapes(hut: HostUnderTest, path: str) -> None:
    after = blob_id(b"print('escape')\n")
    change = {"path": path, "kind": "create", "after": after}
    params = {"callSite": "gate", "changeset": {"baseline": hut.baseline(), "changes": [change]}}
    error_of(raw_roundtrip(hut, "escape", "host/evaluateChangeset", params), -32013, "input")
    assert not (hut.repo.parent / "outside.py").exists()


@pytest.mark.parametrize("blob", ["blob:md5:abc", "not-a-blob", "blob:sha256:XYZ"])
def test_malformed_blob_ids(hut: HostUnderTest, blob: str) -> None:
    change = {"path": "src/app.py", "kind": "modify", "before": blob, "after": blob}
    params = {"callSite": "gate", "changeset": {"baseline": hut.baseline(), "changes": [change]}}
    answer = raw_roundtrip(hut, "blob", "host/evaluateChangeset", params)
    if "result" in answer:
        # `blob:md5:abc` matches the changeset schema's blobRef; unresolvable is then a result
        assert blob.startswith("blob:md5:"), answer
        assert answer["result"]["decision"] == "indeterminate"
        assert "stale-baseline" in {d["reason"] for d in answer["result"]["coverage"]["degraded"]}
        return
    assert answer["error"]["code"] in (-32013, -32602), answer
    assert answer["error"]["data"]["failClass"] == "input"


def test_put_blob_bad_input(hut: HostUnderTest) -> None:
    for params in ({"bytes": "abc", "encoding": "rot13"}, {"bytes": 5, "encoding": "utf-8"}, {}):
        answer = raw_roundtrip(hut, "put", "host/putBlob", params)
        error_of(answer, -32602, "input")
    stored = hut.call("host/putBlob", {"bytes": "hello\n", "encoding": "utf-8"})
    assert stored["blobId"] == blob_id(b"hello\n")


def test_concurrent_requests_are_independent(hut: HostUnderTest) -> None:
    changeset = hut.changeset({"src/concurrent.py": "C = 1\n"})
    params = {"callSite": "gate", "changeset": changeset}
    for index in range(4):
        hut.host.raw_request(f"par-{index}", "host/evaluateChangeset", params)
        hut.host.raw_request(f"st-{index}", "host/status", {})
    decisions = {hut.host.wait_message(f"par-{i}")["result"]["decision"] for i in range(4)}
    assert decisions == {"allow"}
    kinds = {hut.host.wait_message(f"st-{i}")["result"]["receipt"]["kind"] for i in range(4)}
    assert kinds == {"status"}


def test_duplicate_request_ids(pool: HostPool) -> None:
    hut = pool.get(one_provider("hang", budget_ms=1500), fresh=True)
    changeset = hut.changeset({"src/dup.py": "D = 1\n"})
    hut.host.raw_request(
        "dup", "host/evaluateChangeset", {"callSite": "gate", "changeset": changeset}
    )
    hut.host.raw_request("dup", "host/status", {})
    first = hut.host.wait_message("dup")
    error_of(first, -32600)
    second = hut.host.wait_message("dup")
    assert second["result"]["decision"] == "indeterminate", "the original request still completes"
    for _ in range(2):
        again = raw_roundtrip(hut, "reused", "host/status", {})
        assert again["result"]["receipt"]["kind"] == "status", "a finished id may be reused"


def test_client_closes_stdin_mid_request(pool: HostPool) -> None:
    token = "fake-hang-stdin-close"
    hut = pool.get(one_provider("hang", id=token, budget_ms=2000), fresh=True)
    changeset = hut.changeset({"src/stdin.py": "S = 1\n"})
    hut.host.raw_request(
        "in-flight", "host/evaluateChangeset", {"callSite": "gate", "changeset": changeset}
    )
    assert _eventually(lambda: processes_with_arg(token)), "the provider was launched"
    hut.host.close_stdin()
    code = hut.host.wait_exit(15)
    assert code == 0, f"the host exits cleanly when its client goes away (exit {code})"
    leftovers = _eventually(lambda: not processes_with_arg(token), timeout=10)
    orphans = processes_with_arg(token)
    for pid in orphans:  # clean up what our own host left behind, by pid
        _kill(pid)
    assert leftovers and not orphans, f"provider processes outlived the host: {orphans}"
    hut.verify_tree()


def _eventually(predicate: Any, timeout: float = 15.0) -> bool:
    """Poll a condition that becomes true asynchronously (process start/exit), bounded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
