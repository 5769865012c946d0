"""The host client against a real misbehaving host process: every fault ends in a typed error."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
import pytest

from asp_protocol.errors import RequestTimeout
from host_client import HostClient, HostClientSettings, HostProtocolError, HostUnavailable
from tests.support.concurrently import all_at_once
from tests.support.mcp_helpers import settings_for

pytestmark = pytest.mark.anyio


async def test_ok_host_returns_verbatim_validated_results(tmp_path: Path) -> None:
    async with HostClient(settings_for(tmp_path, "ok")) as client:
        status = await client.status()
        assert status.raw["host"]["name"] == "bad-host"
        assert status.model.host.state == "degraded"
        assert status.raw["workspace"]["root"] == str(tmp_path)  # cwd is the workspace
        caps = await client.capabilities()
        authority = await client.authority_status()
        assert caps.raw["receipt"]["kind"] == "capabilities"
        assert authority.raw["policyActivation"] == "base-active"
        assert client.identity["name"] == "bad-host"
        assert client.state == "running"


async def test_trace_and_stats_hold_sizes_not_payloads(tmp_path: Path) -> None:
    async with HostClient(settings_for(tmp_path, "ok", trace_size=3)) as client:
        receipts = [(await client.call("host/status"))["receipt"]["receiptId"] for _ in range(5)]
        entries = client.trace.entries()
        assert len(entries) == 3  # bounded
        dumped = json.dumps([entry.to_dict() for entry in entries])
        assert not any(receipt in dumped for receipt in receipts)
        assert str(tmp_path) not in dumped
        last = entries[-1].to_dict()
        assert last["outcome"] == "ok" and last["method"] == "host/status"
        assert last["requestBytes"] > 0 and last["responseBytes"] > 500
        stats = client.stats.snapshot()["host/status"]
        assert stats["count"] == 5 and stats["errors"] == 0
        assert 0 < stats["p50Ms"] <= stats["p90Ms"] <= stats["maxMs"]


async def test_missing_executable_is_typed_and_goes_down(tmp_path: Path) -> None:
    settings = HostClientSettings(
        argv=(str(tmp_path / "no-such-host"), "serve"),
        cwd=tmp_path,
        max_failed_starts=3,
        backoff_initial=0.01,
        backoff_max=0.02,
    )
    async with HostClient(settings) as client:
        for _ in range(2):
            with pytest.raises(HostUnavailable) as failure:
                await client.call("host/status")
            assert "cannot start host" in failure.value.reason and not failure.value.permanent
        with pytest.raises(HostUnavailable) as failure:
            await client.call("host/status")
        assert failure.value.permanent and "3 consecutive failed starts" in failure.value.reason
        assert client.state == "down"
        with pytest.raises(HostUnavailable) as again:
            await client.call("host/status")
        assert again.value.permanent
        assert client.debug_info()["downReason"].startswith("host is down")


async def test_crash_mid_call_reports_exit_code_and_stderr_then_restarts(tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    async with HostClient(
        settings_for(tmp_path, "count-starts", str(starts), "crash-mid-call")
    ) as client:
        with pytest.raises(HostUnavailable) as failure:
            await client.call("host/status")
        assert failure.value.exit_code == 7
        assert "simulated crash" in failure.value.stderr_tail
        with pytest.raises(HostUnavailable):
            await client.call("host/status")
        assert len(starts.read_text().split()) == 2  # the second call restarted the host
        info = client.debug_info()
        assert info["restarts"] == 1 and info["lastExit"]["exitCode"] == 7


async def test_repeated_crashes_stay_down_without_spawning(tmp_path: Path) -> None:
    starts = tmp_path / "starts.txt"
    settings = settings_for(
        tmp_path, "count-starts", str(starts), "crash-mid-call", max_failed_starts=2
    )
    async with HostClient(settings) as client:
        for _ in range(2):
            with pytest.raises(HostUnavailable):
                await client.call("host/status")
        with pytest.raises(HostUnavailable) as down:
            await client.call("host/status")
        assert down.value.permanent and down.value.exit_code == 7
        assert len(starts.read_text().split()) == 2
        client.reset()
        with pytest.raises(HostUnavailable):
            await client.call("host/status")
        assert len(starts.read_text().split()) == 3


async def test_hang_times_out_and_sends_cancel(tmp_path: Path) -> None:
    record = tmp_path / "cancels.jsonl"
    async with HostClient(
        settings_for(tmp_path, "record-cancel", str(record), timeout=0.3)
    ) as client:
        started = time.perf_counter()
        with pytest.raises(RequestTimeout):
            await client.call("host/status")
        assert time.perf_counter() - started < 3
        entry = client.trace.entries()[-1]
        assert entry.outcome == "timeout" and entry.cancel_sent
        with anyio.fail_after(5):
            while not (record.exists() and record.read_text().endswith("\n")):
                await anyio.sleep(0.02)  # the host creates the file before it writes the line
        received = [json.loads(line) for line in record.read_text().splitlines()]
        assert received == [
            {"method": "$/cancelRequest", "id": entry.request_id, "for": "host/status"}
        ]
        with anyio.fail_after(5):  # the host's -32016 answer arrives late and is recorded
            while entry.late_reply is None:
                await anyio.sleep(0.02)
        assert entry.late_reply == "error"


async def test_caller_cancellation_reaches_host(tmp_path: Path) -> None:
    record = tmp_path / "cancels.jsonl"
    async with HostClient(settings_for(tmp_path, "record-cancel", str(record))) as client:
        with anyio.move_on_after(0.3):
            await client.call("host/capabilities")
        entry = client.trace.entries()[-1]
        assert entry.outcome == "cancelled" and entry.cancel_sent
        with anyio.fail_after(5):
            while not (record.exists() and record.read_text().endswith("\n")):
                await anyio.sleep(0.02)  # the host creates the file before it writes the line
        assert json.loads(record.read_text())["id"] == entry.request_id


async def test_plain_hang_is_a_timeout_and_host_stays_up(tmp_path: Path) -> None:
    async with HostClient(settings_for(tmp_path, "hang", timeout=0.2)) as client:
        with pytest.raises(RequestTimeout):
            await client.call("host/status")
        assert client.state == "running"


async def test_garbage_on_stdout_is_counted_not_fatal(tmp_path: Path) -> None:
    async with HostClient(settings_for(tmp_path, "garbage-stdout")) as client:
        result = await client.call("host/status")
        assert result["host"]["name"] == "bad-host"
        assert client.debug_info()["invalidLinesFromHost"] >= 3


async def test_garbage_only_ends_in_timeout(tmp_path: Path) -> None:
    async with HostClient(
        settings_for(tmp_path, "garbage-stdout", "--no-reply", timeout=0.3)
    ) as client:
        with pytest.raises(RequestTimeout):
            await client.call("host/status")


async def test_ten_megabytes_of_stderr_do_not_deadlock(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "stderr-flood", "10", stderr_buffer_bytes=8192, timeout=30)
    async with HostClient(settings) as client:
        with anyio.fail_after(30):
            await client.call("host/status")
            # stderr and stdout are two pipes: the reply may be read before the last of the
            # flood, which the drain still takes in full
            while not client.debug_info()["stderrTail"].rstrip().endswith("flood finished"):
                await anyio.sleep(0.01)
        info = client.debug_info()
        assert info["stderrBytesTotal"] >= 10 * 1024 * 1024
        assert info["stderrBytesDropped"] >= info["stderrBytesTotal"] - 8192
        assert info["stderrTail"].rstrip().endswith("flood finished")


async def test_exit_during_fifty_calls_fails_all_fast_then_recovers(tmp_path: Path) -> None:
    once = tmp_path / "exited-once"
    settings = settings_for(tmp_path, "exit-after", "50", "--once-file", str(once), timeout=30)
    outcomes: list[BaseException | None] = []
    async with HostClient(settings) as client:
        await client.start()
        started = time.perf_counter()

        async def one() -> None:
            try:
                await client.call("host/status")
                outcomes.append(None)
            except Exception as exc:
                outcomes.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(one)
        elapsed = time.perf_counter() - started
        assert len(outcomes) == 50
        assert all(isinstance(o, HostUnavailable) and o.exit_code == 3 for o in outcomes), outcomes[
            :3
        ]
        assert elapsed < 10, elapsed  # far below the 30 s deadline: failed at exit, not by timeout
        assert "50 calls in flight" in outcomes[0].stderr_tail  # type: ignore[union-attr]
        result = await client.call("host/status")
        assert result["host"]["name"] == "bad-host"
        assert client.debug_info()["restarts"] == 1


async def test_the_pipes_of_every_host_are_closed_once_it_is_gone(tmp_path: Path) -> None:
    """The host's stdin and stdout pipes are the client's own (read and written on the loop):
    after a host that died, its restart and the client's close, no descriptor is left open."""
    once = tmp_path / "exited-once"
    settings = settings_for(tmp_path, "exit-after", "1", "--once-file", str(once), timeout=30)
    before = set(os.listdir("/proc/self/fd"))
    async with HostClient(settings) as client:
        with pytest.raises(HostUnavailable):
            await client.call("host/status")
        assert (await client.call("host/status"))["host"]["name"] == "bad-host"
        assert client.debug_info()["restarts"] == 1
    await anyio.sleep(0)  # the loop closes a pipe transport's file on its next turn
    leaked = set(os.listdir("/proc/self/fd")) - before
    assert not {fd for fd in leaked if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")}


async def test_fifty_concurrent_calls_are_not_crossed(tmp_path: Path) -> None:
    async with HostClient(settings_for(tmp_path, "echo-params")) as client:
        results = await all_at_once(50, lambda n: client.call("host/status", {"probe": n}))
        assert all(results[n]["echo"]["params"] == {"probe": n} for n in range(50))


async def test_malformed_reply_is_a_protocol_error(tmp_path: Path) -> None:
    async with HostClient(settings_for(tmp_path, "malformed-reply")) as client:
        with pytest.raises(HostProtocolError) as failure:
            await client.call("host/authority/status")
        assert "policyActivation" in failure.value.detail
        raw = await client.call(
            "host/authority/status", validate=False
        )  # the generic path can opt out
        assert raw == {"host": "not an object", "receipt": 42}
        assert client.state == "running"


async def test_progress_reaches_the_callback(tmp_path: Path) -> None:
    seen: list[object] = []

    async def on_progress(value: object) -> None:
        seen.append(value)

    async with HostClient(settings_for(tmp_path, "progress")) as client:
        await client.call("host/status", on_progress=on_progress)
        assert [v["done"] for v in seen] == [1, 2, 3]  # type: ignore[index]
        assert client.trace.entries()[-1].progress_events == 3


async def test_close_stops_the_host(tmp_path: Path) -> None:
    async with HostClient(settings_for(tmp_path, "ok")) as client:
        await client.call("host/status")
        pid = client.debug_info()["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert client.state == "closed"
