"""The MCP surface: the tools, the HTTP app and its guards, health checks and logs."""
