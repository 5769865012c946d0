"""The MCP bridge: read-only tools over an ASP host's outer seam, every output NON-AUTHORITATIVE."""

__version__ = "0.1.0"
SERVER_NAME = "asp-mcp-bridge"
