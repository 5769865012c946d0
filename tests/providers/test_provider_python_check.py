"""asp-python-check as a real subprocess behind a test host that serves content from memory.

CORE-SERVER-* style: initialize, version refusal, lifecycle gate, grant, callback-only content,
refusals, every status, typed errors, fingerprints under a line shift, `introduced` vs `all`,
configuration validation and configDigest identity (official configuration fixtures).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from asp_protocol.canonical import blob_id, changeset_digest, config_digest
from asp_protocol.errors import AspError, RequestTimeout
from reference_host.providers import PYTHON_CHECK
from tests.support.definitions import assert_valid, load_json
from tests.support.provider_host import LIMITS, ProviderHost, provider_host

pytestmark = pytest.mark.anyio

MODULE = "reference_host.providers.python_check"
ASSESSMENT = "check-assessment.schema.json"
BASE = {
    "src/app.py": "import os\n\n\ndef handler(event):\n    return event\n",
    "src/util.py": "def helper(a, b, c):\n    return a + b + c\n",
    "README.md": "# demo\n",
}


def python_check(files: dict[str, str | bytes] | None = None, cwd: str | None = None):  # type: ignore[no-untyped-def]
    return provider_host(MODULE, files=BASE if files is None else files, cwd=cwd)


@asynccontextmanager
async def started_check(
    files: dict[str, str | bytes] | None = None, cwd: str | None = None
) -> AsyncIterator[ProviderHost]:
    """`python_check` with its session already started (initialize, initialized with the grant)."""
    async with python_check(files, cwd) as host:
        await host.start()
        yield host


async def evaluate(
    host: ProviderHost, changeset: dict[str, Any], comparison: str = "all", **more: Any
) -> Any:
    params = {
        "changeset": changeset,
        "scope": more.pop("scope", "changeset"),
        "comparison": comparison,
        **more,
    }
    assessment = await host.evaluate(params)
    assert_valid(assessment, ASSESSMENT)
    assert assessment["validAsOf"]["baseline"] == changeset["baseline"]
    assert assessment["validAsOf"]["changesetDigest"] == changeset_digest(changeset)
    assert set(assessment["validAsOf"]["blobs"]) <= set(host.reads)
    return assessment


def codes(assessment: dict[str, Any]) -> list[tuple[str, str]]:
    return [(d["location"]["path"], d["code"]) for d in assessment["diagnostics"]]


@pytest.mark.needs_definitions
async def test_initialize_reports_identity_fingerprint_check_and_read_only_request() -> None:
    async with python_check() as host:
        result = await host.initialize()
        assert_valid(result, "initialize.schema.json#/$defs/result")
        assert result["serverInfo"]["name"] == "asp-python-check"
        assert result["serverInfo"]["fingerprint"] == PYTHON_CHECK.fingerprint()
        check = result["capabilities"]["check"]
        assert check["capabilityVersion"] == "check/1.0" and check["diagnosticSources"] == [
            "python"
        ]
        assert set(check["scopes"]) == {"changeset", "workspace"}
        assert set(check["comparisons"]) == {"all", "introduced"}
        assert result["requestedPermissions"]["write"] is False
        assert result["requestedPermissions"]["network"] is False
        assert result["provenance"]["publisher"]


async def test_unsupported_protocol_refused_before_anything_else() -> None:
    async with python_check() as host:
        with pytest.raises(AspError) as refused:
            await host.initialize("asp/0.1")
        assert refused.value.code == -32014 and refused.value.fail_class == "contract"
        with pytest.raises(AspError) as gated:
            await host.evaluate(
                {"changeset": host.changeset({}), "scope": "changeset", "comparison": "all"}
            )
        assert gated.value.code == -32010 and gated.value.message == "provider-not-initialized"
        assert host.reads == [] and host.tree_calls == []


async def test_evaluate_before_initialized_is_typed_and_reads_nothing() -> None:
    async with python_check() as host:
        await host.initialize()
        changeset = host.changeset({"src/app.py": "x = undefined\n"})
        with pytest.raises(AspError) as gated:
            await host.evaluate({"changeset": changeset, "scope": "changeset", "comparison": "all"})
        assert (gated.value.code, gated.value.fail_class, gated.value.retryable) == (
            -32010,
            "health",
            True,
        )
        assert host.reads == []


@pytest.mark.needs_definitions
async def test_content_comes_only_through_callbacks(tmp_path: Path) -> None:
    # the provider's working directory holds a *different* src/app.py; it must never be looked at
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def broken(:\n", encoding="utf-8")
    async with started_check(cwd=str(tmp_path)) as host:
        changeset = host.changeset({"src/app.py": "import os\nprint(os.sep, missing)\n"})
        assessment = await evaluate(host, changeset)
        assert codes(assessment) == [("src/app.py", "python/undefined-name")]
        after, before = changeset["changes"][0]["after"], changeset["changes"][0]["before"]
        # then its before-state, for what the change removed (check_callers.across_files); it
        # drops names, so the baseline's other Python files are read for their imports
        assert host.reads[:2] == [after, before]
        assert set(host.reads[2:]) <= {blob_id(data) for data in host.files.values()}
        assert assessment["validAsOf"]["blobs"] == host.reads


@pytest.mark.needs_definitions
async def test_grant_is_recorded_and_out_of_grant_paths_are_not_read() -> None:
    files = {**BASE, "secrets/keys.py": "KEY = 1\n"}
    grant = {
        "read": ["src/**", "!**/.env*"],
        "write": False,
        "network": False,
        "resourceLimits": LIMITS,
    }
    async with python_check(files) as host:
        await host.start(grant)
        changeset = host.changeset({"src/app.py": "x = nope\n", "secrets/keys.py": "KEY = nope\n"})
        assessment = await evaluate(host, changeset)
        assert (
            assessment["status"] == "incomplete" and assessment["coverage"]["exhaustive"] is False
        )
        assert codes(assessment) == [("src/app.py", "python/undefined-name")]
        assert any("secrets/keys.py" in d["detail"] for d in assessment["coverage"]["degraded"])
        secret_blob = changeset["changes"][1]["after"]
        assert secret_blob not in host.reads and host.refused == {}


@pytest.mark.needs_definitions
async def test_host_refusal_of_a_read_is_tolerated_as_degraded_coverage() -> None:
    async with started_check() as host:
        changeset = host.changeset({"src/app.py": "y = gone\n"})
        unknown = blob_id(b"bytes the host never received\n")
        changeset["changes"].append({"path": "src/ghost.py", "kind": "create", "after": unknown})
        assessment = await evaluate(host, changeset)
        assert assessment["status"] == "incomplete"
        assert host.refused.get(unknown, 0) >= 1  # the batch, then the blob alone
        assert codes(assessment) == [("src/app.py", "python/undefined-name")]
        assert unknown not in assessment["validAsOf"]["blobs"]
        assert any(unknown in d["detail"] for d in assessment["coverage"]["degraded"])


@pytest.mark.needs_definitions
async def test_findings_codes_severities_ranges_and_help() -> None:
    source = 'import os\nimport json\nimport json\ns = "😀"; y = zz\nbad = "\\d"\n'
    async with started_check() as host:
        assessment = await evaluate(host, host.changeset({"src/app.py": source}))
        by_code = {d["code"]: d for d in assessment["diagnostics"]}
        assert set(by_code) >= {
            "python/unused-import",
            "python/redefined-unused",
            "python/undefined-name",
            "python/syntax-warning",
        }
        undefined = by_code["python/undefined-name"]
        assert undefined["severity"] == "error" and undefined["help"]
        prefix = 's = "😀"; y = '
        column = len(prefix.encode("utf-16-le")) // 2
        assert undefined["location"]["range"] == {
            "start": {"line": 3, "char": column},
            "end": {"line": 3, "char": column + 2},
        }
        assert by_code["python/unused-import"]["severity"] == "warning"
        assert by_code["python/redefined-unused"]["severity"] == "warning"
        broken = await evaluate(host, host.changeset({"src/app.py": "def f(:\n    pass\n"}))
        [syntax] = broken["diagnostics"]
        assert syntax["code"] == "python/syntax-error" and syntax["severity"] == "error"
        assert syntax["location"]["range"]["start"]["line"] == 0 and syntax["help"]
        late = await evaluate(host, host.changeset({"src/app.py": "x = 1\nreturn x\n"}))
        assert [d["severity"] for d in late["diagnostics"]] == ["error"]


@pytest.mark.needs_definitions
async def test_fingerprints_survive_a_line_shift_and_nothing_is_introduced() -> None:
    before = "import os\n\n\ndef handler(event):\n    return undefined_thing\n"
    shifted = "# a comment\n# another\n" + before
    async with started_check({"src/app.py": before}) as host:
        original = await evaluate(host, host.changeset({"src/app.py": before + "\n"}))
        moved = await evaluate(host, host.changeset({"src/app.py": shifted}))
        fingerprints = {(d["code"], d["fingerprint"]) for d in original["diagnostics"]}
        assert fingerprints == {(d["code"], d["fingerprint"]) for d in moved["diagnostics"]}
        lines = {d["location"]["range"]["start"]["line"] for d in moved["diagnostics"]}
        assert lines != {d["location"]["range"]["start"]["line"] for d in original["diagnostics"]}
        introduced = await evaluate(host, host.changeset({"src/app.py": shifted}), "introduced")
        assert introduced["diagnostics"] == [] and introduced["status"] == "complete"


@pytest.mark.needs_definitions
async def test_introduced_versus_all_on_a_before_after_pair() -> None:
    after = "import os\nimport sys\n\n\ndef handler(event):\n    return event + missing\n"
    async with started_check() as host:
        changeset = host.changeset(
            {"src/app.py": after, "src/new.py": "from x import *\nz = q\n", "src/util.py": None}
        )
        everything = await evaluate(host, changeset, "all")
        assert sorted(codes(everything)).count(("src/app.py", "python/unused-import")) == 2
        assert ("src/app.py", "python/undefined-name") in codes(everything)
        introduced = await evaluate(host, changeset, "introduced")
        assert all(d["introduced"] is True for d in introduced["diagnostics"])
        app = [c for p, c in codes(introduced) if p == "src/app.py"]
        assert sorted(app) == ["python/undefined-name", "python/unused-import"]
        unused = [d for d in introduced["diagnostics"] if d["code"] == "python/unused-import"]
        assert "'sys'" in unused[0]["message"]
        new = [c for p, c in codes(introduced) if p == "src/new.py"]
        assert new and sorted(new) == sorted(c for p, c in codes(everything) if p == "src/new.py")
        assert not [p for p, _ in codes(introduced) if p == "src/util.py"]
        before_blob = changeset["changes"][0]["before"]
        assert before_blob in introduced["validAsOf"]["blobs"]
        # `all` reads it too, only to tell what the change removed (check_callers.across_files)
        assert before_blob in everything["validAsOf"]["blobs"]


@pytest.mark.needs_definitions
async def test_pure_rename_introduces_nothing() -> None:
    async with started_check() as host:
        changeset = host.changeset({}, renames={"src/moved.py": "src/app.py"})
        assessment = await evaluate(host, changeset, "introduced")
        assert assessment["diagnostics"] == []
        everything = await evaluate(host, changeset, "all")
        assert codes(everything) == [("src/moved.py", "python/unused-import")]


@pytest.mark.needs_definitions
async def test_workspace_scope_lists_the_tree_and_lists_changed_non_python_files_unsupported() -> (
    None
):
    async with started_check() as host:
        changeset = host.changeset(
            {"README.md": "changed\n", "src/util.py": "def helper():\n    return nope\n"}
        )
        assessment = await evaluate(host, changeset, "all", scope="workspace")
        assert host.tree_calls, "workspace scope enumerates the baseline through workspace/listTree"
        assert sorted(codes(assessment)) == [
            ("src/app.py", "python/unused-import"),
            ("src/util.py", "python/undefined-name"),
        ]
        [skipped] = [e for e in assessment["evidence"] if e["kind"] == "message"]
        assert skipped["data"]["skipped"] == ["README.md"]
        coverage = assessment["coverage"]
        assert coverage["covered"]["scope"] == {"paths": ["src/util.py"]}, (
            "the changed README.md was not analysed, so it is not claimed"
        )
        assert assessment["status"] == "incomplete" and coverage["exhaustive"] is False
        assert [u["detail"].split(":")[0] for u in coverage["unsupported"]] == ["README.md"]
        paths = await evaluate(host, changeset, "all", scope={"paths": ["src/util.py"]})
        assert codes(paths) == [("src/util.py", "python/undefined-name")]


@pytest.mark.needs_definitions
async def test_resolved_comparison_and_foreign_sources_are_unsupported_assessments() -> None:
    async with started_check() as host:
        changeset = host.changeset({"src/app.py": "x = 1\n"})
        resolved = await evaluate(host, changeset, "resolved")
        assert resolved["status"] == "unsupported" and resolved["coverage"]["unsupported"]
        assert resolved["validAsOf"]["blobs"] == []
        foreign = await evaluate(host, changeset, diagnosticSources=["eslint"])
        assert foreign["status"] == "unsupported"
        partial = await evaluate(host, changeset, diagnosticSources=["python", "eslint"])
        assert partial["status"] == "incomplete"
        assert [u["source"] for u in partial["coverage"]["unsupported"]] == ["eslint"]
        ruled = await evaluate(
            host,
            host.changeset({"src/app.py": "import os\nx = y\n"}),
            rules=["python/undefined-name"],
        )
        assert [c for _, c in codes(ruled)] == ["python/undefined-name"]
        assert ruled["coverage"]["covered"]["rules"] == ["python/undefined-name"]


async def test_typed_errors_for_bad_requests() -> None:
    async with started_check() as host:
        good = {"changeset": host.changeset({}), "scope": "changeset", "comparison": "all"}
        for params, code in [
            ({**good, "scope": "galaxy"}, -32602),
            ({**good, "extra": True}, -32602),
            (
                {
                    **good,
                    "changeset": {
                        "baseline": host.baseline,
                        "changes": [
                            {"path": "/etc/x.py", "kind": "create", "after": "blob:sha256:00"}
                        ],
                    },
                },
                -32013,
            ),
            ({**good, "changeset": {"changes": []}}, -32013),
        ]:
            with pytest.raises(AspError) as bad:
                await host.evaluate(params)
            assert bad.value.code == code and bad.value.fail_class == "input"


@pytest.mark.needs_definitions
async def test_configuration_fixtures_validation_and_digest_identity() -> None:
    valid = load_json("fixtures/core/check-evaluate.configuration.valid.json")
    null = load_json("fixtures/core/check-evaluate.configuration.invalid.null.json")
    async with started_check() as host:
        configured = await host.evaluate(valid)
        assert_valid(configured, ASSESSMENT)
        assert configured["provider"]["configDigest"] == config_digest(
            "asp-python-check", "check/1.0", {"verify": {"maxParameters": 2}}
        )
        assert configured["validAsOf"]["changesetDigest"] == changeset_digest(valid["changeset"])
        with pytest.raises(AspError) as rejected:
            await host.evaluate(null)
        assert rejected.value.code == -32602 and rejected.value.fail_class == "input"
        for bad in (
            {"unknown": 1},
            {"verify": {"maxParameters": None}},
            {"disabledRules": ["python/nope"]},
        ):
            with pytest.raises(AspError) as invalid:
                await host.evaluate({**valid, "configuration": bad})
            assert invalid.value.code == -32602
        changeset = host.changeset(
            {"src/util.py": "def helper(a, b, c):\n    return a + b + c\n\n"}
        )
        plain = {"changeset": changeset, "scope": "changeset", "comparison": "all"}
        digests = set()
        for configuration in (
            None,
            {},
            {"maxFileBytes": 2_000_000, "disabledRules": [], "verify": {}},
        ):
            params = plain if configuration is None else {**plain, "configuration": configuration}
            assessment = await host.evaluate(params)
            assert assessment["diagnostics"] == []
            digests.add(assessment["provider"]["configDigest"])
        assert digests == {config_digest("asp-python-check", "check/1.0", {})}
        # one effective configuration for both views: the before-state has the same long signature,
        # so `all` reports it and `introduced` does not
        expected = {"all": ["python/too-many-parameters"], "introduced": []}
        for comparison, found in expected.items():
            limited = await host.evaluate(
                {**plain, "comparison": comparison, "configuration": valid["configuration"]}
            )
            assert [d["code"] for d in limited["diagnostics"]] == found
            assert limited["provider"]["configDigest"] == configured["provider"]["configDigest"]
        quiet = await host.evaluate(
            {
                **plain,
                "changeset": host.changeset({"src/app.py": "import os\n"}),
                "configuration": {"disabledRules": ["python/unused-import"]},
            }
        )
        assert quiet["diagnostics"] == []


@pytest.mark.needs_definitions
async def test_results_are_cached_per_blob_but_reads_stay_exact() -> None:
    async with started_check() as host:
        changeset = host.changeset({"src/app.py": "x = y\n"})
        first = await evaluate(host, changeset)
        second = await evaluate(host, changeset)
        assert (first["cache"]["status"], second["cache"]["status"]) == ("miss", "hit")
        assert first["diagnostics"] == second["diagnostics"]
        # each time the file and its before-state are read, cached findings or not; the other
        # files' import lines, read the first time, are kept by blob id (check_imports)
        assert first["validAsOf"]["blobs"][:2] == second["validAsOf"]["blobs"][:2]
        assert set(second["validAsOf"]["blobs"]) <= set(first["validAsOf"]["blobs"])
        assert host.reads.count(changeset["changes"][0]["after"]) == 2


@pytest.mark.needs_definitions
async def test_a_package_init_may_use_path_and_export_its_submodules() -> None:
    """pyflakes' two `__init__.py` rules (`__path__` is defined there; an `__all__` name may be a
    submodule) follow the file's real name: the same bytes elsewhere are findings. A false
    `undefined name '__path__'` on Django's own `django/core/management/__init__.py` denied a
    sweep of an unchanged Django."""
    text = '__all__ = ["sub"]\n\nPATHS = __path__\n'
    async with started_check() as host:
        package = codes(await evaluate(host, host.changeset({"pkg/__init__.py": text})))
        module = codes(await evaluate(host, host.changeset({"pkg/module.py": text})))
    assert package == []
    assert sorted(module) == [
        ("pkg/module.py", "python/undefined-export"),
        ("pkg/module.py", "python/undefined-name"),
    ]


@pytest.mark.needs_definitions
async def test_large_change_sends_progress_and_cancel_is_answered() -> None:
    files = {f"pkg/m{i}.py": f"import os\nvalue_{i} = {i}\n" for i in range(40)}
    async with started_check(files) as host:
        changeset = host.changeset({path: text + "x = nope\n" for path, text in files.items()})
        assessment = await evaluate(host, changeset)
        assert len(assessment["diagnostics"]) == 80
        reports = [v for v in host.progress if v["kind"] == "report"]
        assert len(reports) >= 3
        for value in reports:
            assert_valid({"token": 2, "value": value}, "progress.schema.json#/$defs/params")
        with pytest.raises(RequestTimeout):  # the host gives up and sends $/cancelRequest
            await host.evaluate(
                {"changeset": changeset, "scope": "workspace", "comparison": "all"}, timeout=0.001
            )
        # still serving after the cancelled request
        assert (await evaluate(host, host.changeset({"pkg/m0.py": "ok = 1\n"})))[
            "status"
        ] == "complete"


@pytest.mark.needs_definitions
async def test_wrong_bytes_from_the_host_and_a_refused_listing_degrade_honestly() -> None:
    async with started_check() as host:
        changeset = host.changeset({"src/app.py": "a = b\n", "src/util.py": "c = d\n"})
        host.corrupt.add(changeset["changes"][0]["after"])
        assessment = await evaluate(host, changeset)
        assert assessment["status"] == "incomplete"
        assert changeset["changes"][0]["after"] not in assessment["validAsOf"]["blobs"]
        assert codes(assessment) == [("src/util.py", "python/undefined-name")]
        host.corrupt.clear()
        host.refuse_tree = True
        listing = await evaluate(host, changeset, scope="workspace")
        assert listing["status"] == "incomplete"
        assert any("listTree" in d["detail"] for d in listing["coverage"]["degraded"])
        assert sorted(codes(listing)) == [
            ("src/app.py", "python/undefined-name"),
            ("src/util.py", "python/undefined-name"),
        ]


@pytest.mark.needs_definitions
async def test_a_change_with_no_python_file_is_unsupported_never_complete() -> None:
    async with started_check() as host:
        changeset = host.changeset({"web/a.ts": "const x: number = 'no';\n"})
        assessment = await evaluate(host, changeset, "all")
        assert assessment["status"] == "unsupported"
        assert assessment["coverage"]["covered"]["diagnosticSources"] == []
        assert "web/a.ts: not Python" in assessment["coverage"]["unsupported"][0]["detail"]
        empty = await evaluate(host, host.changeset({}), "all")
        assert empty["status"] == "complete", "nothing changed: nothing left unanalysed"
