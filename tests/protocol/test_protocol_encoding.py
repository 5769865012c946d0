"""The wire encoder: the same bytes as the stdlib's compact JSON, and a typed answer when a
handler's result has none."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from asp_protocol.canonical import strict_loads
from asp_protocol.errors import AspError, ErrorCode
from asp_protocol.framing import (
    EncodedJson,
    UnencodableMessage,
    compact_json,
    encode_message,
    encode_result,
)
from asp_protocol.jsonrpc import RequestContext
from tests.protocol.test_protocol_jsonrpc import connected_pair
from tests.support.definitions import require_definitions


def _stdlib(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


@pytest.mark.needs_definitions
def test_every_official_example_and_fixture_encodes_as_the_stdlib_would() -> None:
    seen = 0
    for path in sorted(require_definitions().rglob("*.json")):
        value = json.loads(path.read_text(encoding="utf-8"))
        message = {"jsonrpc": "2.0", "id": seen, "result": value}
        assert encode_message(message) == _stdlib(message), path
        seen += 1
    assert seen > 100


@pytest.mark.parametrize(
    "value",
    [
        'line\nbreak "quoted" back\\slash \t tab \x00 nul \x1f unit \x7f del',
        "non-ASCII é ü 漢字 \u2028 \U0001f600",
        2**70,
        -(2**63),
        0.1,
        -0.0,
        1e300,
        {"nested": [[[]], {}, None, True, False]},
        [1, "two", 3.5],
    ],
)
def test_json_values_encode_byte_for_byte_and_round_trip(value: Any) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": value}
    line = encode_message(message)
    assert line == _stdlib(message)
    assert line.count(b"\n") == 1  # a newline inside a string is escaped: one line per message
    assert json.loads(line) == message


@pytest.mark.parametrize("request_id", [7, -3, 'id with "quotes" and é', None])
@pytest.mark.parametrize("value", [{"a": [1, 2.5, None, "x\n\u2028"]}, [], "s", 0, None, {}])
def test_a_result_given_as_its_encoding_makes_the_same_line(request_id: Any, value: Any) -> None:
    message = {"jsonrpc": "2.0", "id": request_id, "result": value}
    spliced = encode_result(request_id, EncodedJson(compact_json(value)))
    assert spliced == encode_result(request_id, value) == encode_message(message)
    assert spliced == _stdlib(message)


def test_an_exponent_float_is_the_same_number() -> None:
    line = encode_message({"x": 1.5e-7})
    assert json.loads(line) == {"x": 1.5e-7}


@pytest.mark.parametrize("value", ["lone \ud800 surrogate", object()])
def test_a_value_without_json_text_is_a_typed_error(value: Any) -> None:
    with pytest.raises(UnencodableMessage):
        encode_message({"jsonrpc": "2.0", "id": 1, "result": value})


@pytest.mark.anyio
async def test_an_unencodable_result_is_answered_as_an_internal_error_and_serving_goes_on() -> None:
    async with connected_pair() as (server, client, _):

        async def broken(params: Any, ctx: RequestContext) -> Any:
            return {"text": "half a pair \udc80"}

        async def fine(params: Any, ctx: RequestContext) -> Any:
            return {"text": "ok"}

        server.register("broken", broken)
        server.register("fine", fine)
        with pytest.raises(AspError) as caught:
            await client.request("broken", {}, timeout=5)
        assert caught.value.code == ErrorCode.INTERNAL_ERROR.code
        assert caught.value.detail == "the result has no JSON text"
        assert await client.request("fine", {}) == {"text": "ok"}


def _json_loads_strict(text: str | bytes) -> Any:
    def reject(name: str) -> Any:
        raise ValueError(name)

    return json.loads(text, parse_constant=reject)


@pytest.mark.parametrize(
    "text",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{"a":[1,2.5,-0,1e400,"\\u00e9",null,true]}}',
        '{"s":"\\ud800 lone surrogate escape","big":123456789012345678901234567890}',
        '{"a":1,"a":2}',
        "  [1, 2]\n",
        '{"x":"caf\u00e9"}'.encode("utf-8-sig"),
        '{"x":"\u6f22"}'.encode("utf-16"),
        '{"x":"\u6f22"}'.encode("utf-32-le"),
        b'"\xed\xa0\x80 a surrogate in UTF-8 bytes"',
        b"[" * 400 + b"]" * 400,
        b'[5e-324, -0.0, 1.7976931348623157e308, 0.1e1, 1E2, -9223372036854775809, "\\u0000"]',
        "\ufeff".encode() + b'{"bom": true}',
    ],
)
def test_strict_loads_parses_as_json_loads_does(text: str | bytes) -> None:
    assert repr(strict_loads(text)) == repr(_json_loads_strict(text))


def test_strict_loads_agrees_with_json_loads_on_damaged_lines() -> None:
    """pydantic-core parses first, the stdlib decides what it refuses: on thousands of randomly
    damaged copies of a real message (bytes changed, dropped, added) both accept the same lines
    with the same values and refuse the same lines."""
    message = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"s": 'é\u2028 \\ "q"', "n": [1, -0.0, 2.5e-7, 2**70, True, None], "o": {}},
    }
    base = json.dumps(message, ensure_ascii=False).encode()
    alphabet = b'{}[]",:\\0123456789.eE+-tfnrul \t\n\x00\x7f\xc3\xa9\xed\xa0\x80'
    rng = random.Random(7)
    for _ in range(3000):
        damaged = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(damaged))
            roll = rng.random()
            if roll < 0.4:
                damaged[at] = rng.choice(alphabet)
            elif roll < 0.7:
                del damaged[at]
            else:
                damaged.insert(at, rng.choice(alphabet))
        line = bytes(damaged)
        try:
            expected: Any = repr(_json_loads_strict(line))
        except (ValueError, RecursionError):
            expected = ValueError
        try:
            got: Any = repr(strict_loads(line))
        except (ValueError, RecursionError):
            got = ValueError
        assert got == expected, line


@pytest.mark.parametrize("text", ["NaN", '{"a":Infinity}', b"[-Infinity]", "\ufeff{}", "{", b""])
def test_strict_loads_refuses_what_json_loads_strictly_refuses(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        _json_loads_strict(text)
    with pytest.raises(ValueError):
        strict_loads(text)
