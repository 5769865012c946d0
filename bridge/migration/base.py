"""The one pydantic base of the migration models: camelCase JSON, immutable, closed."""

from __future__ import annotations

from asp_protocol.wire import Frozen


class Model(Frozen):
    """Base for the migration models: the project's frozen wire model (camelCase, closed)."""
