"""Not an MCP server: never answers, and keeps running after its stdin closes."""

import signal
import sys

print("deaf: starting up, slowly", file=sys.stderr, flush=True)
while True:
    signal.pause()
