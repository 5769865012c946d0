"""The one pydantic base of every wire model in the project.

One alias convention: fields are snake_case in Python and camelCase on the wire (generated, so a
field never spells its own alias; an explicit alias appears only where the wire name is not the
camelCase of a Python name, as `from` and `pass`). Either name validates, so code and fixtures
may build a model with the Python names.

- `Closed`: the schema is closed (extra keys are a contract error) - provider inputs the host must
  judge, manifests, policies.
- `Open`: checked for the fields a reader relies on, extra keys kept verbatim - outer results, so a
  newer host's fields never break an older client.
- `Frozen`: a closed model that is also immutable once built (policy, manifests, reports).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


def wire_fields(obj: object, *names: str) -> dict[str, Any]:
    """The named attributes of *obj* under their wire (camelCase) names, in that order, None kept:
    the JSON of a plain report object that is not a model."""
    return {to_camel(name): getattr(obj, name) for name in names}


def present(**fields: Any) -> dict[str, Any]:
    """The keyword arguments that are not None: an optional wire field is absent, never null."""
    return {name: value for name, value in fields.items() if value is not None}


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python; either validates."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """The object as it goes on the wire: wire names, absent optionals left out."""
        return self.model_dump(by_alias=True, exclude_none=True)


class Closed(WireModel):
    model_config = ConfigDict(extra="forbid")


class Open(WireModel):
    model_config = ConfigDict(extra="allow")


class Frozen(Closed):
    model_config = ConfigDict(frozen=True)
