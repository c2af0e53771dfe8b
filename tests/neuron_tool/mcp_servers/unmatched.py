"""An MCP peer written by hand whose structured content does not match its output schemas.

`python unmatched.py SIZE`: its tool `count` declares an output schema of `{"n":
integer}` and answers `{"n": "x" * SIZE}`; `broken` declares an output schema that
is no JSON Schema, its `enum` a string of SIZE characters. A client quoting either
whole in its error would hand a model (and its logs) megabytes.
"""

from __future__ import annotations

import json
import sys

SIZE = int(sys.argv[1])
_OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
_BROKEN = {"type": "object", "properties": {"n": {"enum": "x" * SIZE}}}
TOOLS = [
    {"name": "count", "inputSchema": {"type": "object"}, "outputSchema": _OUTPUT},
    {"name": "broken", "inputSchema": {"type": "object"}, "outputSchema": _BROKEN},
]


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def answer(request_id: object, result: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
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
                    "serverInfo": {"name": "unmatched", "version": "0"},
                },
            )
        elif method == "tools/list":
            answer(request_id, {"tools": TOOLS})
        elif method == "tools/call":
            content = [{"type": "text", "text": "counted"}]
            answer(request_id, {"content": content, "structuredContent": {"n": "x" * SIZE}})
        else:
            error = {"code": -32601, "message": method}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


if __name__ == "__main__":
    main()
