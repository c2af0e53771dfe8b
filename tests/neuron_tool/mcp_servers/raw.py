"""An MCP peer written by hand, line by line, to send what SDK servers never do.

`python raw.py id-last`: answers with "id" as the last key, as TypeScript servers
do, and its `text` tool answers `size` bytes. `python raw.py notify`: its `text`
tool first sends a notification of `size` bytes, then answers "done".
"""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1]
TOOL = {
    "name": "text",
    "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}},
}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def answer(request_id: object, result: dict[str, object]) -> None:
    send({"result": result, "jsonrpc": "2.0", "id": request_id})


def text(size: int) -> dict[str, object]:
    return {"content": [{"type": "text", "text": "x" * size}]}


for line in sys.stdin:
    request = json.loads(line)
    method, request_id = request.get("method"), request.get("id")
    if request_id is None:
        continue  # a notification
    if method == "initialize":
        answer(
            request_id,
            {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            },
        )
    elif method == "tools/list":
        answer(request_id, {"tools": [TOOL]})
    elif method == "tools/call":
        size = int(request["params"]["arguments"]["size"])
        if MODE == "notify":
            message = {"level": "info", "data": "y" * size}
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": message})
            answer(request_id, text(4))
        else:
            answer(request_id, text(size))
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})
