"""`python -m bridge` is the `asp-mcp-bridge` command."""

from bridge.cli import main

if __name__ == "__main__":
    main()
