"""Small MCP servers (and misbehaving processes) that the MCP bridge tests start as children."""
