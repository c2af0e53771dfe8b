"""An MCP peer written by hand, line by line, that floods its client with notices, sends
them in shapes MCP forbids, and answers completions as MCP forbids.

`python noisy.py flood`: declares tools (listChanged), resources (subscribe and
listChanged) and completions, and speaks the handshake era (notices unasked). A read
of `flood://updates` first sends `UPDATES` notices that `flood://0`, `flood://1`, ...
were updated, then answers; `flood://notices` sends `NOTICES` notices that its tools
changed; `flood://shapes` sends notices of the wrong shapes, then one good one, that
`flood://good` was updated. Its one tool is named `listed_N`, N the tools/list
requests it has answered. Completions of the resource template `strings://{a}` are
values that are not strings, of `many://{a}` 101 values, of `total://{a}` a total
below the values sent, of `big://{a}` a value of `BIG` characters; those of `hang://{a}`,
and a subscription to `hang://`, are never answered.

`python noisy.py bare`: declares tools only; its tool `seen` answers the methods it
was sent, so a test can tell that nothing else was.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODE = sys.argv[1] if __name__ == "__main__" else "flood"
UPDATES = 5000
NOTICES = 3000
BIG = 200_000
CAPABILITIES: dict[str, dict[str, Any]] = {
    "flood": {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "completions": {},
    },
    "bare": {"tools": {}},
}
# JSON-RPC all (a line that is not would end the session), MCP none.
WRONG_SHAPES: list[dict[str, Any]] = [
    {"method": "notifications/resources/updated"},
    {"method": "notifications/resources/updated", "params": {"uri": 5}},
    {"method": "notifications/resources/updated", "params": {"uri": {"uri": "flood://0"}}},
    {"method": "notifications/tools/list_changed", "params": {"_meta": "not an object"}},
    {"method": "notifications/no_such_thing", "params": {"uri": "flood://0"}},
]
COMPLETIONS: dict[str, dict[str, Any]] = {
    "strings://{a}": {"values": ["fine", 5, None]},
    "many://{a}": {"values": [f"v{index}" for index in range(101)]},
    "total://{a}": {"values": ["a", "b", "c"], "total": 2},
    "big://{a}": {"values": ["x" * BIG]},
}
NEVER = ("hang://{a}", "hang://")  # what it never answers

seen: list[str] = []
listings = 0


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")) + "\n")


def answer(request_id: object, result: dict[str, Any]) -> None:
    send({"id": request_id, "result": result})
    sys.stdout.flush()


def updated(uri: str) -> None:
    send({"method": "notifications/resources/updated", "params": {"uri": uri}})


def read(uri: str) -> dict[str, Any]:
    if uri == "flood://updates":
        for index in range(UPDATES):
            updated(f"flood://{index}")
    elif uri == "flood://notices":
        for _ in range(NOTICES):
            send({"method": "notifications/tools/list_changed"})
    elif uri == "flood://shapes":
        for notice in WRONG_SHAPES:
            send(notice)
        updated("flood://good")
    return {"contents": [{"uri": uri, "text": "done"}]}


def call(name: str) -> dict[str, Any]:
    text = json.dumps(seen) if name == "seen" else name
    return {"content": [{"type": "text", "text": text}]}


def handle(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result for `method`; `{"error": method}` for one it does not know, None for none."""
    global listings
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": CAPABILITIES[MODE],
            "serverInfo": {"name": "noisy", "version": "0"},
        }
    if method == "tools/list":
        listings += 1
        name = "seen" if MODE == "bare" else f"listed_{listings}"
        return {"tools": [{"name": name, "inputSchema": {"type": "object"}}]}
    if method == "tools/call":
        return call(params["name"])
    if method in ("resources/subscribe", "resources/unsubscribe"):
        return None if params["uri"] in NEVER else {}
    if method == "resources/read":
        return read(params["uri"])
    if method == "completion/complete":
        uri = params["ref"]["uri"]
        return None if uri in NEVER else {"completion": COMPLETIONS[uri]}
    return {"error": method}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        method, request_id = request.get("method"), request.get("id")
        if request_id is None:
            continue  # a notification
        seen.append(method)
        result = handle(method, request.get("params") or {})
        if result is None:
            continue  # never answered
        if "error" in result:
            send({"id": request_id, "error": {"code": -32601, "message": method}})
            sys.stdout.flush()
        else:
            answer(request_id, result)


if __name__ == "__main__":
    main()
