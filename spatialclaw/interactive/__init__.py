"""Interactive use: step-by-step sessions and their daemon, the MCP server, the Jupyter extension."""
