"""The namespaced experimental MCP extension and the binding bake-off that measures it (ADR 0025)."""

EXTENSION_ID = "dev.asp-mcp-bridge/asp-outer-seam"
EXTENSION_VERSION = "0.1.0"

__all__ = ["EXTENSION_ID", "EXTENSION_VERSION"]
