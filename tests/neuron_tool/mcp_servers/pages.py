"""An MCP peer written by hand whose tool listing comes in many pages.

`python pages.py PER_PAGE PAGES`: tools/list answers PAGES pages of PER_PAGE tools
each, every page well within any cap on one answer; together they may be far more.
"""

from __future__ import annotations

import json
import sys

PER_PAGE, PAGES = int(sys.argv[1]), int(sys.argv[2])


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def page(number: int) -> dict[str, object]:
    schema = {"type": "object"}
    tools = [{"name": f"t{number}_{k}", "inputSchema": schema} for k in range(PER_PAGE)]
    found: dict[str, object] = {"tools": tools}
    if number + 1 < PAGES:
        found["nextCursor"] = str(number + 1)
    return found


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        method, request_id = request.get("method"), request.get("id")
        params = request.get("params") or {}
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            result: dict[str, object] = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "pages", "version": "0"},
            }
        elif method == "tools/list":
            result = page(int(params.get("cursor") or 0))
        else:
            error = {"code": -32601, "message": method}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
            continue
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
