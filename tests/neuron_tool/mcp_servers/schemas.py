"""An MCP peer written by hand whose tools' input schemas refer outside themselves.

`python schemas.py URL`: the tool `remote` takes `{"$ref": URL}`, `local_file` a
`$ref` to a file:// URI, `based` a relative `$ref` under an `$id` of URL, and
`dangling` a `$ref` to a definition its schema does not have. No client may
fetch the first three, and none of the four can be offered to a model.
"""

from __future__ import annotations

import json
import sys

URL = sys.argv[1]
REFS = {
    "remote": {"$ref": URL},
    "local_file": {"$ref": "file:///etc/hostname"},
    "based": {"$ref": "other.json"},
    "dangling": {"$ref": "#/$defs/missing"},
}


def schema(name: str) -> dict[str, object]:
    found: dict[str, object] = {"type": "object", "properties": {"x": REFS[name]}}
    if name == "based":
        found["$id"] = URL
    return found


TOOLS = [{"name": name, "inputSchema": schema(name)} for name in REFS]


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, request_id = request.get("method"), request.get("id")
    if request_id is None:
        continue  # a notification
    if method == "initialize":
        result: dict[str, object] = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "schemas", "version": "0"},
        }
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})
