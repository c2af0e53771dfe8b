"""Not an MCP server: complains on stderr and exits at once with status 3."""

import sys

print("exits: cannot read configuration file /etc/exits.toml", file=sys.stderr, flush=True)
sys.exit(3)
