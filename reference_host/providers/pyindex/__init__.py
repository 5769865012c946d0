"""Static Python index for the inspect provider: stdlib `ast` only, cached per blob id."""

from reference_host.providers.pyindex.engine import BlobMismatch, InspectEngine, python_tree
from reference_host.providers.pyindex.impact import ChangedFile, impact
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.queries import (
    callees,
    callers,
    references,
    resolve_symbol,
    symbols,
)

__all__ = [
    "BlobMismatch",
    "ChangedFile",
    "InspectEngine",
    "PythonIndex",
    "callees",
    "callers",
    "impact",
    "python_tree",
    "references",
    "resolve_symbol",
    "symbols",
]
