"""The shared provider runtime over real pipes: lifecycle gate, typed errors, cancel, shutdown/exit.

Driven through `asp-fake-provider --behavior clean|hang`, the thinnest provider on the runtime.
Also unit tests for the read-grant globs and strict configuration normalization it relies on.
"""

from __future__ import annotations

import random

import anyio
import pytest

from asp_protocol.errors import AspError
from asp_protocol.grants import ReadGrant, glob_regex
from reference_host.providers.configuration import Setting, resolve_configuration
from tests.support.definitions import assert_valid
from tests.support.provider_host import (
    NOT_INITIALIZED,
    error_axes,
    provider_host,
    wait_exit,
    wait_sent,
)

pytestmark = pytest.mark.anyio

FAKE = "reference_host.providers.fake"
FILES = {"src/app.py": "x = 1\n"}


def evaluate_params(changeset: dict[str, object]) -> dict[str, object]:
    return {"changeset": changeset, "scope": "changeset", "comparison": "all"}


@pytest.mark.needs_definitions
async def test_unsupported_protocol_is_refused_before_anything_else() -> None:
    async with provider_host(FAKE, "--behavior", "clean", files=FILES) as host:
        with pytest.raises(AspError) as refused:
            await host.initialize("asp/9.9")
        error = refused.value
        assert error.code == -32014 and error.fail_class == "contract"
        assert_valid(error.to_wire(), "error.schema.json")
        # still not initialized: capability calls are refused and no callback was made
        with pytest.raises(AspError) as gated:
            await host.evaluate(evaluate_params(host.changeset({})))
        assert gated.value.code == -32010
        assert host.reads == [] and host.tree_calls == []


async def test_capability_before_initialized_is_provider_not_initialized() -> None:
    async with provider_host(FAKE, "--behavior", "clean", files=FILES) as host:
        for step in ("spawned", "initializing"):
            if step == "initializing":
                await host.initialize()
            with pytest.raises(AspError) as gated:
                await host.evaluate(evaluate_params(host.changeset({"src/app.py": "x = 2\n"})))
            assert error_axes(gated.value) == NOT_INITIALIZED
        assert host.reads == []
        await host.initialized()
        assessment = await host.evaluate(evaluate_params(host.changeset({"src/app.py": "x = 2\n"})))
        assert assessment["status"] == "complete"


async def test_malformed_initialized_grant_leaves_the_provider_uninitialized() -> None:
    async with provider_host(FAKE, "--behavior", "clean", files=FILES) as host:
        await host.initialize()
        await host.endpoint.notify(
            "initialized", {"grantedPermissions": {"read": ["**"]}, "baseline": host.baseline}
        )
        with pytest.raises(AspError) as gated:
            await host.evaluate(evaluate_params(host.changeset({})))
        assert gated.value.code == -32010


async def test_bad_requests_get_typed_errors_and_the_session_keeps_serving() -> None:
    async with provider_host(FAKE, "--behavior", "clean", files=FILES) as host:
        await host.start()
        with pytest.raises(AspError) as twice:
            await host.initialize()
        assert twice.value.code == -32600
        cases = [
            ({"changeset": host.changeset({}), "scope": "changeset"}, -32602),
            ({**evaluate_params(host.changeset({})), "callSite": "gate"}, -32602),
            ({**evaluate_params(host.changeset({})), "comparison": "sideways"}, -32602),
            (
                evaluate_params(
                    {"baseline": host.baseline, "changes": [{"path": "a.py", "kind": "modify"}]}
                ),
                -32013,
            ),
            (
                evaluate_params(
                    {
                        "baseline": host.baseline,
                        "changes": [
                            {"path": "../x.py", "kind": "create", "after": "blob:sha256:00"}
                        ],
                    }
                ),
                -32013,
            ),
            ("not an object", -32602),
        ]
        for params, code in cases:
            with pytest.raises(AspError) as bad:
                await host.evaluate(params)  # type: ignore[arg-type]
            assert bad.value.code == code, params
            assert bad.value.fail_class == "input"
        with pytest.raises(AspError) as unknown:
            await host.endpoint.request("check/teleport", {}, timeout=5)
        assert unknown.value.code == -32601
        assert (await host.evaluate(evaluate_params(host.changeset({}))))["status"] == "complete"


async def test_cancel_request_answers_32016_and_the_provider_keeps_serving() -> None:
    async with provider_host(FAKE, "--behavior", "hang", files=FILES) as host:
        await host.start()
        outcome: list[BaseException] = []

        async def evaluate() -> None:
            try:
                await host.evaluate(evaluate_params(host.changeset({})))
            except AspError as error:
                outcome.append(error)

        async with anyio.create_task_group() as tg:
            tg.start_soon(evaluate)
            request_id = await wait_sent(host, "check/evaluate")
            await host.endpoint.notify("$/cancelRequest", {"id": request_id})
        [error] = outcome
        assert isinstance(error, AspError) and error.code == -32016 and error.fail_class == "health"
        assert error.retryable
        with pytest.raises(AspError):
            await host.initialize()  # still alive and answering


async def test_shutdown_then_exit_ends_the_process_cleanly() -> None:
    async with provider_host(FAKE, "--behavior", "clean", files=FILES) as host:
        await host.start()
        assert await host.endpoint.request("shutdown", None, timeout=5) is None
        with pytest.raises(AspError) as closing:
            await host.evaluate(evaluate_params(host.changeset({})))
        assert closing.value.code == -32010 and closing.value.message == "provider-shutting-down"
        await host.endpoint.notify("exit")
        assert await wait_exit(host.process) == 0
    async with provider_host(FAKE, "--behavior", "clean", files=FILES) as host:
        await host.endpoint.notify("exit")
        assert await wait_exit(host.process) == 1  # exit without shutdown
    async with provider_host(FAKE, "--behavior", "clean", files=FILES) as host:
        assert host.process.stdin is not None
        await host.process.stdin.aclose()
        assert await wait_exit(host.process) == 0  # end of input


def test_read_grant_globs() -> None:
    grant = ReadGrant(["src/**", "**/*.py", "!**/.env*", "!secrets/**"])
    assert grant.allows("src/a/b.txt") and grant.allows("src")
    assert grant.allows("top.py") and grant.allows("deep/er/mod.py")
    assert not grant.allows("docs/readme.md")
    assert not grant.allows("src/.env.local") and not grant.allows("secrets/key.py")
    assert not ReadGrant([]).allows("a.py")
    assert ReadGrant(["**"]).allows("any/path/at/all")
    assert not ReadGrant(["src/*.py"]).allows("src/sub/x.py")
    assert ReadGrant(["src/?.py"]).allows("src/a.py")


def test_read_grant_matches_as_its_globs_one_by_one() -> None:
    """The grant tries a path against all its globs in one regex: it must answer as matching them
    one at a time does (an include matches, no exclusion does), for every mix of globs."""
    rng = random.Random(7)
    parts = ["src", "a", "b.py", ".env", "x.txt", "sub", "**", "*", "?.py", "*.py", ".env.*"]
    paths = ["/".join(rng.choice(parts[:6]) for _ in range(rng.randint(1, 4))) for _ in range(300)]
    paths += ["src", "src/", "/src/a.py", "a\nb.py", "", ".env", "deep/.env.local"]
    for _ in range(200):
        globs = [
            ("!" if rng.random() < 0.3 else "")
            + "/".join(rng.choice(parts) for _ in range(rng.randint(1, 3)))
            for _ in range(rng.randint(0, 4))
        ]
        grant = ReadGrant(globs)
        include = [glob_regex(g) for g in globs if not g.startswith("!")]
        exclude = [glob_regex(g[1:]) for g in globs if g.startswith("!")]
        for path in paths:
            bare = path.lstrip("/")
            one_by_one = any(rx.match(bare) for rx in include) and not any(
                rx.match(bare) for rx in exclude
            )
            assert grant.allows(path) is one_by_one, (globs, path)


def test_configuration_is_strict_and_normalized() -> None:
    schema = {
        "verify": Setting("object", children={"maxParameters": Setting("int", minimum=1)}),
        "disabledRules": Setting("str-set", default=None, choices=frozenset({"p/a", "p/b"})),
        "strict": Setting("bool", default=False),
    }
    resolve = lambda params: resolve_configuration(params, schema, "p", "check/1.0")  # noqa: E731
    omitted = resolve({})
    for same in (
        {"configuration": {}},
        {"configuration": {"verify": {}}},
        {"configuration": {"strict": False, "disabledRules": []}},
    ):
        assert resolve(same).digest == omitted.digest
    assert omitted.normalized == {} and omitted.values["strict"] is False
    ordered = resolve({"configuration": {"disabledRules": ["p/b", "p/a"]}})
    assert ordered.normalized == {"disabledRules": ["p/a", "p/b"]}
    assert ordered.digest == resolve({"configuration": {"disabledRules": ["p/a", "p/b"]}}).digest
    assert resolve({"configuration": {"verify": {"maxParameters": 2}}}).digest != omitted.digest
    for bad in (
        None,
        {"x": 1},
        {"verify": None},
        {"verify": {"maxParameters": 0}},
        {"verify": {"maxParameters": True}},
        {"disabledRules": ["p/zzz"]},
        {"disabledRules": ["p/a", "p/a"]},
        {"strict": "yes"},
        [],
    ):
        with pytest.raises(AspError) as rejected:
            resolve({"configuration": bad})
        assert rejected.value.code == -32602 and rejected.value.fail_class == "input"
