"""mcb: the command line (local runner, status, MCP over stdio)."""
