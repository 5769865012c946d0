"""The binding bake-off: the ADR 0025 cases run natively and through the MCP extension, compared."""
