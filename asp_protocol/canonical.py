"""Canonical JSON and the digests built on it (docs/architecture.md#wire-and-digests): one place, so every digest agrees."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic_core import from_json

BLOB_PREFIX = "blob:sha256:"
DIGEST_PREFIX = "sha256:"


def canonical_json(value: Any) -> str:
    """Keys sorted recursively, no whitespace, non-ASCII kept as UTF-8, integers as integers."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_STRICT = json.JSONDecoder(parse_constant=_reject_constant)


def strict_loads(text: str | bytes) -> Any:
    """`json.loads` without Python's NaN/Infinity extension: what it accepts, canonical_json can
    write back and digest (a NaN would otherwise parse, then fail every digest).

    pydantic-core's parser reads a line first, about twice as fast as the stdlib's (a host's
    status reply, every request a host reads). What it refuses — a lone-surrogate escape, a
    byte-order mark, UTF-16 or -32 bytes, nesting deeper than it goes, and every line that is not
    JSON — is decided by the stdlib's parser as before, so the answer is `json.loads`'s for
    every input (tests/protocol/test_protocol_encoding.py). The stdlib decoder is built once:
    `json.loads` with an option builds a decoder and its scanner per call."""
    try:
        return from_json(text, allow_inf_nan=False)
    except ValueError:
        pass
    if isinstance(text, bytes | bytearray):
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    return _STRICT.decode(text)


def digest_bytes(data: bytes) -> str:
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of *value*."""
    return digest_bytes(canonical_json(value).encode("utf-8"))


def blob_id(data: bytes) -> str:
    """Content address of raw file bytes: `blob:sha256:<hex>`."""
    return BLOB_PREFIX + hashlib.sha256(data).hexdigest()


def changeset_digest(changeset: Any) -> str:
    return digest(changeset)


def request_digest(method: str, params: Any) -> str:
    return digest({"method": method, "params": params})


def policy_digest(policy: Any) -> str:
    return digest(policy)


def config_digest(provider_id: str, capability_version: str, configuration: Any) -> str:
    """Identity of a provider's effective settings (docs/architecture.md#protocol-map), shared by host and providers."""
    return digest(
        {
            "provider": provider_id,
            "capabilityVersion": capability_version,
            "configuration": configuration,
        }
    )
