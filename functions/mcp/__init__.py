"""The MCP endpoint (docs/design.md, "MCP endpoint and lookup command")."""
