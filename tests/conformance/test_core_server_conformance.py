"""CORE-SERVER-* conformance (CONFORMANCE.md §2): the real `asp-python-check`, black-box over pipes.

One test per requirement id. The candidate provider is the built-in Core check provider
(`python -m reference_host.providers.python_check`), driven over real stdio by the minimal fake host
in `support.provider_host`, which answers `workspace/listTree` / `workspace/readBlob` from memory,
filters both to the read grant and refuses out-of-grant reads with -32012.

Where an id is about the host *rejecting* provider output (malformed and host-owned fields,
freshness, timeout, behaviour-only), the fake host's judgement is the reference host's own
validator, `reference_host.evaluate.assessment_checks.validate_assessment`, applied to the real provider's
Assessment tampered in the one way the id names (and to the official host-owned fixtures). The
hung provider of CORE-SERVER-TIMEOUT is `asp-fake-provider --behavior hang`.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from asp_protocol import CHECK_CAPABILITY_VERSION
from asp_protocol.canonical import blob_id, changeset_digest, digest
from asp_protocol.errors import AspError, RequestTimeout
from asp_protocol.framing import LineReader, encode_message
from asp_protocol.host_owned import HOST_OWNED_FIELDS, find_host_owned_fields
from asp_protocol.jsonrpc import RequestContext
from asp_protocol.vocabulary import CALL_SITES
from reference_host.coverage import degradation
from reference_host.evaluate.assessment_checks import AssessmentCheck
from reference_host.evaluate.decision import ProviderRun, decide
from reference_host.providers import PUBLISHER, PYTHON_CHECK
from reference_host.providers.lint_builtins import CONFIG_FILES, PACKAGE_INITS
from tests.providers.test_provider_python_check import (
    ASSESSMENT,
    MODULE,
    codes,
    evaluate,
    python_check,
    started_check,
)
from tests.support.assessment_check import as_stamped, host_reading
from tests.support.definitions import (
    assert_valid,
    load_json,
    require_definitions,
    schema_errors,
)
from tests.support.host_checks import assert_each_id_has_a_test
from tests.support.provider_host import (
    LIMITS,
    NOT_INITIALIZED,
    READ_ONLY_GRANT,
    ProviderHost,
    error_axes,
    provider_host,
    wait_exit,
)

pytestmark = pytest.mark.anyio

FAKE = "reference_host.providers.fake"
SECRET = "secrets/out-of-grant.txt"
SECRET_BYTES = b"TOKEN = 'never leaves the host'\n"
WORKSPACE: dict[str, str | bytes] = {
    "src/core.py": "def core(value):\n    return value\n",
    "README.md": "# core\n",
    SECRET: SECRET_BYTES,
}
CLEAN = "def core(value):\n    return value + 1\n"
DIRTY = "import os\n\n\ndef core(value):\n    return value + missing\n"
NO_SECRETS = {
    "read": ["**", "!secrets/**"],
    "write": False,
    "network": False,
    "resourceLimits": LIMITS,
}
PROVIDER_ID = PYTHON_CHECK.id
SOURCES = list(PYTHON_CHECK.diagnostic_sources)
TOP_LEVEL_FIXTURE = "fixtures/core/check-assessment.invalid.host-owned-top-level.json"
NESTED_FIXTURE = "fixtures/core/check-assessment.invalid.host-owned-nested.json"


@dataclass
class Run:
    """One real evaluation: the Assessment, the ChangeSet sent, and the blobs served meanwhile."""

    assessment: dict[str, Any]
    changeset: dict[str, Any]
    served: set[str]


async def run_check(
    host: ProviderHost, edits: dict[str, str | bytes | None], comparison: str = "all", **more: Any
) -> Run:
    changeset = host.changeset(edits)
    before = len(host.reads)
    assessment = await evaluate(host, changeset, comparison, **more)
    return Run(assessment, changeset, set(host.reads[before:]))


def judge(
    host: ProviderHost,
    run: Run,
    raw: Any = None,
    *,
    baseline: dict[str, Any] | None = None,
    digest_sent: str | None = None,
) -> AssessmentCheck:
    """The reference host's reading of *raw* (default: the run's own Assessment) for this request."""
    return host_reading(
        run.assessment if raw is None else raw,
        PROVIDER_ID,
        CHECK_CAPABILITY_VERSION,
        baseline=run.changeset["baseline"] if baseline is None else baseline,
        changeset_digest=changeset_digest(run.changeset) if digest_sent is None else digest_sent,
        served=run.served,
        served_ever=set(host.reads),
        sources=SOURCES,
    )


def rejected(check: AssessmentCheck, reason: str) -> None:
    """*check* is non-passing evidence: the named degradation, nothing stamped for a decision."""
    assert check.reason == reason, (check.reason, check.detail)
    assert not check.complete and check.diagnostics == []


def params_for(changeset: dict[str, Any]) -> dict[str, Any]:
    return {"changeset": changeset, "scope": "changeset", "comparison": "all"}


async def raw_exchange(requests: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Run the provider on raw pipes: initialize, initialized, then *requests*; their raw replies by id."""
    baseline = {"rev": "tree:raw"}
    process = await anyio.open_process(
        [sys.executable, "-m", MODULE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    reader = LineReader(process.stdout)

    async def answer() -> dict[str, Any]:
        with anyio.fail_after(10):
            line = await reader.next_line()
        assert isinstance(line, bytes), line
        message: dict[str, Any] = json.loads(line)
        return message

    try:
        init = {
            "protocolVersion": "asp/1.0",
            "host": {"name": "raw-host", "version": "0"},
            "workspace": {"root": "/workspace", "baseline": baseline},
        }
        await process.stdin.send(
            encode_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        )
        assert "result" in await answer()
        grant = {"grantedPermissions": READ_ONLY_GRANT, "baseline": baseline}
        await process.stdin.send(
            encode_message({"jsonrpc": "2.0", "method": "initialized", "params": grant})
        )
        for request in requests:
            await process.stdin.send(encode_message({"jsonrpc": "2.0", **request}))
        replies: dict[Any, dict[str, Any]] = {}
        while len(replies) < len(requests):
            reply = await answer()
            assert "method" not in reply, f"no callback or notification expected here: {reply}"
            replies[reply["id"]] = reply
        await process.stdin.aclose()
        assert await wait_exit(process) == 0  # end of input ends the session cleanly
        return replies
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


# -- one test per CORE-SERVER-* id ------------------------------------------------------------------


@pytest.mark.needs_definitions
async def test_core_server_initialize() -> None:
    async with python_check(WORKSPACE) as host:
        result = await host.initialize()
    assert_valid(result, "initialize.schema.json#/$defs/result")
    info = result["serverInfo"]
    assert (info["name"], info["version"]) == (PROVIDER_ID, "0.1.0")
    assert info["fingerprint"] == PYTHON_CHECK.fingerprint()
    assert info["fingerprint"].startswith("sha256:") and len(info["fingerprint"]) == 71
    assert result["provenance"] == {"publisher": PUBLISHER}
    assert result["capabilityFamilies"] == ["check"]
    assert set(result["capabilities"]) == {"check"}  # no edit, hence no putBlob/apply surface
    check = result["capabilities"]["check"]
    assert check["capabilityVersion"] == CHECK_CAPABILITY_VERSION
    assert check["diagnosticSources"] == SOURCES
    assert check["unsupportedReporting"] == "assessment-status"
    # a read-only permission request: no write, no network, no egress allowlist
    requested = result["requestedPermissions"]
    assert requested["write"] is False and requested["network"] is False
    assert "networkAllowlist" not in requested and requested["read"]


@pytest.mark.needs_definitions
async def test_core_server_unsupported_protocol() -> None:
    async with python_check(WORKSPACE) as host:
        for offered in ("asp/0.1", "asp/2.0", "ASP/1.0", ""):
            with pytest.raises(AspError) as refused:
                await host.initialize(offered)
            error = refused.value
            assert (error.code, error.fail_class) == (-32014, "contract"), offered
            assert_valid(error.to_wire(), "error.schema.json")
        # a host that sends the grant anyway does not make the refused session usable
        await host.initialized()
        changeset = host.changeset({"src/core.py": DIRTY})
        with pytest.raises(AspError) as gated:
            await host.evaluate(params_for(changeset))
        assert (gated.value.code, gated.value.message) == (-32010, "provider-not-initialized")
        assert host.reads == [] and host.tree_calls == [] and host.progress == []
    # negotiate or refuse: the refusal left no state behind, the supported version still works
    async with python_check(WORKSPACE) as host:
        with pytest.raises(AspError):
            await host.initialize("asp/9.9")
        assert_valid(await host.initialize("asp/1.0"), "initialize.schema.json#/$defs/result")


@pytest.mark.needs_definitions
async def test_core_server_preinitialized() -> None:
    async with python_check(WORKSPACE) as host:
        changeset = host.changeset({"src/core.py": DIRTY})
        for step in ("spawned", "initializing", "malformed-grant"):
            if step == "initializing":
                await host.initialize()
            if step == "malformed-grant":  # a grant without resourceLimits is no grant
                await host.endpoint.notify(
                    "initialized",
                    {"grantedPermissions": {"read": ["**"]}, "baseline": host.baseline},
                )
            with pytest.raises(AspError) as gated:
                await host.evaluate(params_for(changeset))
            error = gated.value
            assert error_axes(error) == NOT_INITIALIZED, step
            assert_valid(error.to_wire(), "error.schema.json")
        assert host.reads == [] and host.tree_calls == []
        await host.initialized()
        assessment = await evaluate(host, changeset)
        assert assessment["status"] == "complete" and codes(assessment)


@pytest.mark.needs_definitions
async def test_core_server_initialized_grant() -> None:
    narrowed = {"read": ["src/**"], "write": False, "network": False, "resourceLimits": LIMITS}
    files = {**WORKSPACE, "tools/gen.py": "GENERATED = 1\n"}
    write_attempts: list[str] = []

    async def refuse_write(params: Any, ctx: RequestContext) -> Any:
        write_attempts.append(ctx.method)
        raise AspError(-32012, "no write authority in this session")

    async with python_check(files) as host:
        for method in ("workspace/putBlob", "workspace/applyEdit", "applyEdit"):
            host.endpoint.register(method, refuse_write)
        result = await host.initialize()
        assert result["requestedPermissions"]["read"] == ["**"]  # asks for everything ...
        await host.initialized(narrowed)  # ... and is granted src/** only
        edits: dict[str, str | bytes | None] = {"src/core.py": DIRTY, "tools/gen.py": "x = nope\n"}
        first = await run_check(host, edits)
        # a host that later re-sends a wider grant does not widen the recorded one
        await host.initialized(dict(READ_ONLY_GRANT))
        second = await run_check(host, edits)
        for run in (first, second):
            assessment = run.assessment
            tools_blob = run.changeset["changes"][1]["after"]
            assert codes(assessment) == [
                ("src/core.py", "python/unused-import"),
                ("src/core.py", "python/undefined-name"),
            ]
            assert (
                tools_blob not in run.served and tools_blob not in assessment["validAsOf"]["blobs"]
            )
            assert assessment["status"] == "incomplete"
            assert assessment["coverage"]["exhaustive"] is False
            assert any(
                "tools/gen.py" in d["detail"] and "read grant" in d["detail"]
                for d in assessment["coverage"]["degraded"]
            )
        assert host.refused == {}, "the provider applies the grant itself, never probing the host"
        assert write_attempts == []


@pytest.mark.needs_definitions
async def test_core_server_callback_content(tmp_path: Path) -> None:
    # the provider's working directory holds different, broken sources; they must never be read
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "core.py").write_text("def broken(:\n", encoding="utf-8")
    (tmp_path / "src" / "disk_only.py").write_text("value = undefined_on_disk\n", encoding="utf-8")
    files: dict[str, str | bytes] = {**WORKSPACE, "src/util.py": "def util():\n    return nope\n"}
    async with started_check(files, cwd=str(tmp_path)) as host:
        base_core = blob_id(host.files["src/core.py"])
        base_util = blob_id(host.files["src/util.py"])
        # changeset + introduced: the after blob *and* the baseline blob come through readBlob
        introduced = await run_check(host, {"src/core.py": DIRTY}, "introduced")
        after = introduced.changeset["changes"][0]["after"]
        assert introduced.served == {after, base_core}
        assert sorted(introduced.assessment["validAsOf"]["blobs"]) == sorted({after, base_core})
        assert {d["code"] for d in introduced.assessment["diagnostics"]} == {
            "python/unused-import",
            "python/undefined-name",
        }
        # changeset scope lists no sources; an undefined name asks only for the root lint
        # configuration files and the top-level packages' __init__ files (the builtins they
        # declare or install, lint_builtins.py)
        assert [call["globs"] for call in host.tree_calls] == [
            list(CONFIG_FILES),
            list(PACKAGE_INITS),
        ]
        # workspace + all: the baseline is enumerated through listTree at the issued baseline
        host.tree_calls.clear()
        workspace = await run_check(host, {"src/core.py": CLEAN}, "all", scope="workspace")
        project = (list(CONFIG_FILES), list(PACKAGE_INITS))
        sources = [call for call in host.tree_calls if call["globs"] not in project]
        assert [call.get("baseline") for call in sources] == [host.baseline]
        clean_after = workspace.changeset["changes"][0]["after"]
        # and src/core.py's before-state, to tell what the change removed (check_callers)
        assert workspace.served == {clean_after, base_util, base_core}
        assert codes(workspace.assessment) == [("src/util.py", "python/undefined-name")]
    every_path = {
        d["location"]["path"] for r in (introduced, workspace) for d in r.assessment["diagnostics"]
    }
    assert "src/disk_only.py" not in every_path  # never listed by the host, so never seen
    assert all(
        d["code"] != "python/syntax-error"
        for r in (introduced, workspace)
        for d in r.assessment["diagnostics"]
    )


@pytest.mark.needs_definitions
async def test_core_server_grant_scope() -> None:
    secret = blob_id(SECRET_BYTES)
    async with python_check(WORKSPACE) as host:
        await host.start(NO_SECRETS)
        # the fake host's callbacks: tree entries and blob bytes are filtered to the read grant
        listing = await host._list_tree({}, None)  # type: ignore[arg-type]
        assert [e["path"] for e in listing["entries"]] == ["README.md", "src/core.py"]
        with pytest.raises(AspError) as denied:
            await host._read_blob({"blobs": [secret]}, None)  # type: ignore[arg-type]
        assert (denied.value.code, denied.value.fail_class) == (-32012, "policy")
        host.refused.clear()
        # the provider's own listing and reads stay inside the grant
        workspace = await run_check(host, {"src/core.py": DIRTY}, "all", scope="workspace")
        assert host.tree_calls and secret not in host.reads
        assert workspace.assessment["status"] == "complete" and host.refused == {}
        assert SECRET not in json.dumps(workspace.assessment)
        # a changeset that names the secret's bytes under an in-grant path: the host checks the
        # grant against where the blob lives, refuses with -32012, and the provider says so
        changeset = host.changeset({"src/core.py": DIRTY})
        changeset["changes"].append({"path": "src/copied.py", "kind": "create", "after": secret})
        before = len(host.reads)
        assessment = await evaluate(host, changeset)
        served = set(host.reads[before:])
    assert host.refused.get(secret, 0) >= 1 and secret not in host.reads
    assert secret not in served and secret not in assessment["validAsOf"]["blobs"]
    assert assessment["status"] == "incomplete" and assessment["coverage"]["exhaustive"] is False
    assert any(secret in d["detail"] for d in assessment["coverage"]["degraded"])
    assert {path for path, _ in codes(assessment)} == {"src/core.py"}  # the rest still checked
    assert "TOKEN" not in json.dumps(assessment)
    check = judge(host, Run(assessment, changeset, served))
    assert check.reason == "incomplete"  # honest partial coverage, not a pass


@pytest.mark.needs_definitions
async def test_core_server_valid_results() -> None:
    unknown = blob_id(b"bytes this host never received\n")
    async with started_check(WORKSPACE) as host:
        clean = await run_check(host, {"src/core.py": CLEAN})
        finding = await run_check(host, {"src/core.py": DIRTY})
        partial_changeset = host.changeset({"src/core.py": DIRTY})
        partial_changeset["changes"].append(
            {"path": "src/ghost.py", "kind": "create", "after": unknown}
        )
        before = len(host.reads)
        partial = Run(
            await evaluate(host, partial_changeset), partial_changeset, set(host.reads[before:])
        )
        resolved = await run_check(host, {"src/core.py": DIRTY}, "resolved")
        cancelled = await cancel_mid_read(host, host.changeset({"src/core.py": "y = 2\n"}))
        after_cancel = await run_check(host, {"src/core.py": CLEAN + "\n"})
    # every Assessment already passed check-assessment.schema.json inside `evaluate`
    expected = [
        (clean, "complete", None),
        (finding, "complete", None),
        (partial, "incomplete", "incomplete"),
        (resolved, "unsupported", "unsupported"),
        (after_cancel, "complete", None),
    ]
    for run, status, reason in expected:
        assert_valid(run.assessment, ASSESSMENT)
        assert run.assessment["status"] == status
        assert judge(host, run).reason == reason
    assert clean.assessment["diagnostics"] == [] and clean.assessment["coverage"]["exhaustive"]
    assert {d["severity"] for d in finding.assessment["diagnostics"]} == {"error", "warning"}
    assert unknown in json.dumps(partial.assessment["coverage"]["degraded"])
    assert resolved.assessment["coverage"]["unsupported"] and resolved.served == set()
    # cancellation: this provider answers on the error channel (the inner seam allows -32016
    # instead of a `cancelled` Assessment) and propagates the cancel to its own callback
    assert (cancelled.code, cancelled.fail_class, cancelled.retryable) == (-32016, "health", True)
    assert_valid(cancelled.to_wire(), "error.schema.json")


async def cancel_mid_read(host: ProviderHost, changeset: dict[str, Any]) -> AspError:
    """Cancel a `check/evaluate` while the provider waits on its readBlob; the typed answer."""
    entered, released = anyio.Event(), anyio.Event()

    async def held(params: Any, ctx: RequestContext) -> Any:
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            released.set()

    host.endpoint.register("workspace/readBlob", held)
    outcome: list[AspError] = []

    async def evaluate_until_cancelled() -> None:
        with pytest.raises(AspError) as answered:
            await host.evaluate(params_for(changeset))
        outcome.append(answered.value)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(evaluate_until_cancelled)
            await entered.wait()
            request_id = [i for m, i in host.sent if m == "check/evaluate"][-1]
            await host.endpoint.notify("$/cancelRequest", {"id": request_id})
    with anyio.fail_after(10):
        await released.wait()  # the provider cancelled its own pending readBlob
    host.endpoint.register("workspace/readBlob", host._read_blob)
    [error] = outcome
    return error


@pytest.mark.needs_definitions
async def test_core_server_typed_error() -> None:
    baseline = {"rev": "tree:raw"}
    empty = {"baseline": baseline, "changes": []}

    def evaluate_request(request_id: int, params: Any) -> dict[str, Any]:
        return {"id": request_id, "method": "check/evaluate", "params": params}

    cases = {
        2: ({"changeset": empty, "scope": "galaxy", "comparison": "all"}, -32602, "input"),
        3: ({**params_for(empty), "callSite": "gate"}, -32602, "input"),
        4: (
            {"changeset": {"changes": []}, "scope": "changeset", "comparison": "all"},
            -32013,
            "input",
        ),
        5: (
            params_for(
                {
                    "baseline": baseline,
                    "changes": [
                        {"path": "../etc/x.py", "kind": "create", "after": "blob:sha256:00"}
                    ],
                }
            ),
            -32013,
            "input",
        ),
        6: ("not an object", -32602, "input"),
    }
    requests = [evaluate_request(i, params) for i, (params, _, _) in cases.items()]
    requests.append(evaluate_request(7, params_for(empty)))  # control: a result, not an error
    replies = await raw_exchange(requests)
    for request_id, (_, code, fail_class) in cases.items():
        reply = replies[request_id]
        assert "result" not in reply, reply
        error = reply["error"]
        assert_valid(error, "error.schema.json")
        assert (error["code"], error["data"]["failClass"]) == (code, fail_class), reply
    control = replies[7]
    assert "error" not in control
    assert_valid(control["result"], ASSESSMENT)
    assert control["result"]["status"] == "complete"


@pytest.mark.needs_definitions
async def test_core_server_rejected_malformed_host_fields() -> None:
    async with started_check(WORKSPACE) as host:
        run = await run_check(host, {"src/core.py": DIRTY, "README.md": "# changed\n"})
    real = run.assessment
    assert real["evidence"], "the README skip is reported as evidence data"
    control = judge(host, run)
    # README.md is not Python: listed unsupported, so the honest status is incomplete
    assert control.reason == "incomplete" and len(control.diagnostics) == 2
    benign = copy.deepcopy(real)
    benign["evidence"][0]["data"]["nested"] = {"note": "provider data may nest"}
    assert judge(host, run, benign).reason == "incomplete", "nested provider data is not forged"

    top_fixture = load_json(TOP_LEVEL_FIXTURE)
    nested_fixture = load_json(NESTED_FIXTURE)
    forged_top = {k: v for k, v in top_fixture.items() if k not in real}
    assert set(forged_top) <= HOST_OWNED_FIELDS and len(forged_top) == 17
    for key, value in forged_top.items():  # each forged top-level field alone
        rejected(judge(host, run, {**real, key: value}), "malformed")
    rejected(judge(host, run, {**real, **forged_top}), "malformed")
    # nested: the fixture's forged fix.args on a real diagnostic, its forged evidence data
    forged_fix = copy.deepcopy(real)
    forged_fix["diagnostics"][0]["fix"] = nested_fixture["diagnostics"][0]["fix"]
    forged_data = copy.deepcopy(real)
    forged_data["evidence"][0]["data"]["nested"] = nested_fixture["evidence"][0]["data"]["nested"]
    deep = copy.deepcopy(real)
    deep["evidence"][0]["data"]["a"] = {"b": [{"c": {"decision": "allow"}}]}
    for forged in (forged_fix, forged_data, deep):
        assert schema_errors(forged, ASSESSMENT)
        check = judge(host, run, forged)
        rejected(check, "malformed")
        assert "host-owned" in check.detail
    # the official fixtures themselves, judged for the provider they name
    for fixture in (top_fixture, nested_fixture):
        provider = fixture["provider"]["id"]
        sources = ["core-check-provider"]
        official = as_stamped(fixture, provider, CHECK_CAPABILITY_VERSION, sources=sources)
        rejected(official, "malformed")
    # malformed outputs: not an object, missing or mistyped members, wrong identity or config
    missing_coverage = {k: v for k, v in real.items() if k != "coverage"}
    bad_status = {**real, "status": "passed"}
    bad_severity = copy.deepcopy(real)
    bad_severity["diagnostics"][0]["severity"] = "fatal"
    impostor = copy.deepcopy(real)
    impostor["provider"]["id"] = "someone-else"
    other_config = copy.deepcopy(real)
    other_config["provider"]["configDigest"] = digest({"configuration": {"verify": {}}})
    unknown_member = {**real, "verdictHint": "allow"}
    malformed_outputs: list[Any] = [
        [],
        "complete",
        {},
        missing_coverage,
        bad_status,
        bad_severity,
        impostor,
        other_config,
        unknown_member,
    ]
    for malformed in malformed_outputs:
        rejected(judge(host, run, malformed), "malformed")


@pytest.mark.needs_definitions
async def test_core_server_rejected_freshness() -> None:
    async with started_check(WORKSPACE) as host:
        run = await run_check(host, {"src/core.py": DIRTY})
        other = host.changeset({"src/core.py": CLEAN})
        issued = host.baseline
        host.files["src/core.py"] = b"def core(value):\n    return value * 2\n"
        moved = host.baseline  # the host's baseline has since moved on
    assert moved != issued and run.assessment["validAsOf"]["baseline"] == issued
    assert judge(host, run).reason is None  # fresh as issued
    rejected(judge(host, run, baseline=moved), "stale")
    stale = copy.deepcopy(run.assessment)
    stale["validAsOf"]["baseline"] = {"rev": "tree:" + digest(["an", "older", "tree"])}
    rejected(judge(host, run, stale), "stale")
    wrong_digest = copy.deepcopy(run.assessment)
    wrong_digest["validAsOf"]["changesetDigest"] = changeset_digest(other)
    rejected(judge(host, run, wrong_digest), "stale")
    rejected(judge(host, run, digest_sent=changeset_digest(other)), "stale")
    never_served = copy.deepcopy(run.assessment)
    never_served["validAsOf"]["blobs"].append(blob_id(b"a blob this host never served\n"))
    check = judge(host, run, never_served)
    rejected(check, "stale")
    assert "never served" in check.detail
    unclaimed = copy.deepcopy(run.assessment)
    assert unclaimed["validAsOf"]["blobs"], "the real run read and claimed its after blob"
    unclaimed["validAsOf"]["blobs"] = []
    check = judge(host, run, unclaimed)
    rejected(check, "stale")
    assert "omits" in check.detail


@pytest.mark.needs_definitions
async def test_core_server_timeout() -> None:
    deadline = 0.3
    async with provider_host(
        FAKE, "--behavior", "hang", "--id", "fake-check", files=WORKSPACE
    ) as host:
        await host.start()
        changeset = host.changeset({"src/core.py": DIRTY})
        with anyio.fail_after(5), pytest.raises(RequestTimeout):
            await host.evaluate(params_for(changeset), timeout=deadline)
        assert host.process.returncode is None  # hung, not crashed: no answer at all
        assert ("$/cancelRequest", None) in host.sent
    # control: the same provider answering within the deadline is usable evidence
    async with provider_host(
        FAKE, "--behavior", "hang", "--id", "fake-check", "--hang-seconds", "0", files=WORKSPACE
    ) as prompt:
        await prompt.start()
        answered = await prompt.evaluate(params_for(prompt.changeset({"src/core.py": DIRTY})))
    assert_valid(answered, ASSESSMENT)
    assert answered["status"] == "complete" and answered["provider"]["id"] == "fake-check"
    # missing evidence is never a passing Assessment ...
    missing = host_reading(
        None,
        "fake-check",
        CHECK_CAPABILITY_VERSION,
        baseline=changeset["baseline"],
        changeset_digest=changeset_digest(changeset),
        served=set(),
        served_ever=set(host.reads),
    )
    rejected(missing, "malformed")
    # ... and a timed-out required provider never lets a decision pass, at any call-site
    timed_out = ProviderRun("fake-check", "core-check", "required", health_failure=True)
    timed_out.degraded.append(
        degradation(
            "fake-check",
            "timed-out",
            f"check/evaluate did not answer within {deadline}s",
            requirement="core-check",
            capability="check",
        )
    )
    completed = ProviderRun(
        "fake-check", "core-check", "required", completed=True, authorized=True, authority={}
    )
    assert decide("gate", ["core-check"], [completed], []).decision == "allow"
    for call_site in CALL_SITES:
        outcome = decide(call_site, ["core-check"], [timed_out], [])  # type: ignore[arg-type]
        assert outcome.decision == "indeterminate", call_site
        assert outcome.coverage["ran"] == [] and outcome.coverage["exhaustive"] is False
        assert "timed-out" in {d["reason"] for d in outcome.coverage["degraded"]}


@pytest.mark.needs_definitions
async def test_core_server_behavior_only() -> None:
    async with started_check(WORKSPACE) as host:
        run = await run_check(host, {"src/core.py": DIRTY})
        # the provider serves no host method: it can never stand in for status, gate or authority
        for method in (
            "host/status",
            "host/capabilities",
            "host/evaluateChangeset",
            "host/authority/status",
            "host/applyProposal",
            "host/requestEditPlan",
        ):
            with pytest.raises(AspError) as unknown:
                await host.endpoint.request(method, {}, timeout=5)
            assert unknown.value.code == -32601, method
    real = run.assessment
    assert_valid(real, ASSESSMENT)
    assert find_host_owned_fields(real) == []
    assert {d["severity"] for d in real["diagnostics"]} >= {"error"}
    # an Assessment is not a Decision, a receipt, authority evidence or an assurance
    for ref in (
        "verdict.schema.json",
        "verdict.schema.json#/$defs/auditReceipt",
        "assurance.schema.json#/$defs/authorityEvidence",
        "assurance.schema.json#/$defs/applyAssurance",
    ):
        assert schema_errors(real, ref), f"an Assessment must not validate as {ref}"
    # ... and a Decision (or a decision-dressed Assessment) is never accepted as an Assessment
    require_definitions()
    for verdict_example in ("verdict.json", "verdict.indeterminate-degraded.json"):
        rejected(judge(host, run, load_json(f"examples/verdict/{verdict_example}")), "malformed")
    dressed = {**real, "decision": "allow", "pass": True, "assurance": {"mode": "gated"}}
    rejected(judge(host, run, dressed), "malformed")
    # provenance is host-owned: the host stamps the authenticated id over the provider's source
    spoofed = copy.deepcopy(real)
    for diagnostic in spoofed["diagnostics"]:
        diagnostic["source"] = "host"
    check = judge(host, run, spoofed)
    assert check.reason is None
    assert {d["source"] for d in check.diagnostics} == {PROVIDER_ID}


# -- the id list ----------------------------------------------------------------------------------


@pytest.mark.needs_definitions
def test_every_core_server_id_has_its_test() -> None:
    """Each CORE-SERVER-* id of CONFORMANCE.md has a test named for it here."""
    assert_each_id_has_a_test("CORE-SERVER", 12, globals())
