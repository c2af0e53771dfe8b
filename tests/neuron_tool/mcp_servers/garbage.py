"""Not an MCP server: prints a banner on stdout, then waits for its stdin to close."""

import sys

print("Welcome to the garbage server, version 0.0!", flush=True)
sys.stdin.read()
