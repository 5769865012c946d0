"""The host's checks of an inspect provider's page (reference_host/inspect/answer_checks.py): a
host-owned key at any depth is refused whether or not the name also occurs as a plain value, a
name that occurs only as a value passes, the page's size is its UTF-8 JSON bytes, and a string
with no UTF-8 form (a lone surrogate, which a `\\ud800` escape decodes to) is refused, typed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from asp_protocol.host_owned import HOST_OWNED_FIELDS
from reference_host.inspect.answer_checks import check_inspect_result

BLOB = "blob:sha256:" + "a" * 64


def page(edge_data: Any) -> dict[str, Any]:
    nodes = [
        {"id": f"m{n}.py::f", "name": "f", "kind": "function", "location": {"path": f"m{n}.py"}}
        for n in range(30)
    ]
    edges = [{"from": "m0.py::f", "to": "m1.py::f", "kind": "calls", "data": edge_data}]
    return {"nodes": nodes, "edges": edges, "data": {}, "validAsOf": {"rev": "r", "blobs": [BLOB]}}


def check(raw: dict[str, Any]) -> Any:
    return check_inspect_result(
        raw, "references", rev="r", allowed_blobs={BLOB}, served_ever={BLOB}
    )


@pytest.mark.parametrize("name", sorted(HOST_OWNED_FIELDS))
def test_a_nested_host_owned_key_is_refused(name: str) -> None:
    forged = check(page({"deep": [{"x": 1, name: "allow"}]}))
    assert forged.result is None and forged.reason == "malformed"
    assert name in forged.detail
    hidden = check(page({"note": name, "deeper": {name: 1}}))  # also as a value
    assert hidden.result is None and hidden.reason == "malformed"


@pytest.mark.parametrize(
    "data", [{"note": "apply"}, {"note": 'say "verdict" here'}, {"Apply": 1, "applyx": 2}]
)
def test_names_that_are_no_keys_pass_and_the_size_is_measured(data: dict[str, Any]) -> None:
    raw = page(data)
    checked = check(raw)
    assert checked.result is not None and checked.reason is None
    assert checked.size == len(json.dumps(raw, separators=(",", ":")))


def test_the_size_counts_utf8_bytes_of_non_ascii_text() -> None:
    raw = page({"note": "Grüße, 漢字"})
    checked = check(raw)
    assert checked.result is not None
    assert checked.size == len(json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode())


def test_a_lone_surrogate_from_the_provider_is_malformed_not_a_crash() -> None:
    raw = json.loads(json.dumps(page({"note": "x"})).replace('"x"', '"\\ud800"'))
    checked = check(raw)
    assert checked.result is None and checked.reason == "malformed"
    assert "UTF-8" in checked.detail
