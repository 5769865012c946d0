"""The official ASP definition bundle (schemas, examples, fixtures), read from ../shared/asp."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

_REPO = Path(__file__).resolve().parents[2]
MISSING = (
    "needs the ASP definition data (schemas, examples, fixtures): set ASP_DEFINITION_DIR to its "
    "directory or place it at ../shared/asp"
)


def definition_dir() -> Path | None:
    """`$ASP_DEFINITION_DIR`, else `../shared/asp` beside the checkout; None when neither exists."""
    configured = os.environ.get("ASP_DEFINITION_DIR")
    candidate = Path(configured) if configured else _REPO.parent / "shared" / "asp"
    return candidate if (candidate / "schemas").is_dir() else None


def require_definitions() -> Path:
    """The bundle directory, or skip the calling test (CI always has it). Tests that need it are
    marked `needs_definitions` and skipped at collection; reaching this skip means a test lacks
    the mark."""
    found = definition_dir()
    if found is None:
        pytest.skip(f"{MISSING} (this test lacks @pytest.mark.needs_definitions)")
    return found


def load_json(relative: str) -> Any:
    return json.loads((require_definitions() / relative).read_text(encoding="utf-8"))


@cache
def _registry() -> Any:
    from referencing import Registry, Resource

    schemas_dir = require_definitions() / "schemas"
    resources = []
    for path in sorted(schemas_dir.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


SCHEMA_BASE = "https://covibes.dev/asp/schemas/"


def schema_errors(instance: Any, ref: str) -> list[str]:
    """Validation errors of *instance* against e.g. `outer-host.schema.json#/$defs/statusResult`."""
    from jsonschema import Draft202012Validator

    require_definitions()
    validator = Draft202012Validator({"$ref": SCHEMA_BASE + ref}, registry=_registry())
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(instance)
    ]


def assert_valid(instance: Any, ref: str) -> None:
    errors = schema_errors(instance, ref)
    assert not errors, f"not valid against {ref}:\n" + "\n".join(errors[:20])
