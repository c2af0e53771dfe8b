"""Not an MCP server: reads its stdin and never answers, until stdin closes."""

import sys

print("silent: thinking very hard", file=sys.stderr, flush=True)
sys.stdin.read()
