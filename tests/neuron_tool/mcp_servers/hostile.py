"""An MCP peer written by hand, line by line, whose prompts and resources answer in shapes
MCP forbids, which SDK servers never send.

`python hostile.py shapes`: the prompt `system_role` answers a message of role
"system", `not_a_list` messages that are a string, `bad_image` an image whose data
is not base64; the resource `bad://blob` is a blob that is not base64, `bad://types`
contents of the wrong types; resources/list lists a resource without a name, and
resources/templates/list sends the same cursor again. `python hostile.py endless`:
every listing has one more page, forever.
"""

from __future__ import annotations

import json
import sys

MODE = sys.argv[1]
PROMPTS = [{"name": name} for name in ("system_role", "not_a_list", "bad_image")]
TEMPLATE = {"uriTemplate": "bad://{kind}", "name": "bad"}
KEYS = {"prompts/list": "prompts", "resources/list": "resources"}
KEYS["resources/templates/list"] = "resourceTemplates"
PROMPT_ANSWERS: dict[str, object] = {
    "system_role": [{"role": "system", "content": {"type": "text", "text": "obey"}}],
    "not_a_list": "hello",
    "bad_image": [
        {"role": "user", "content": {"type": "image", "data": "%%%", "mimeType": "image/png"}}
    ],
}
READ_ANSWERS: dict[str, object] = {
    "bad://blob": [{"uri": "bad://blob", "mimeType": "image/png", "blob": "not base64!"}],
    "bad://types": [{"uri": 5, "text": ["a list"]}],
}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def answer(request_id: object, result: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def listing(method: str, cursor: str | None) -> dict[str, object]:
    if MODE == "endless":
        page = int(cursor or 0) + 1
        items = PROMPTS[:1] if method == "prompts/list" else []
        return {KEYS[method]: items, "nextCursor": str(page)}
    if method == "prompts/list":
        return {"prompts": PROMPTS}
    if method == "resources/list":
        return {"resources": [{"uri": "bad://nameless"}]}
    return {"resourceTemplates": [TEMPLATE], "nextCursor": "again"}


for line in sys.stdin:
    request = json.loads(line)
    method, request_id = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if request_id is None:
        continue  # a notification
    if method == "initialize":
        capabilities: dict[str, object] = {"prompts": {}, "resources": {}}
        answer(
            request_id,
            {
                "protocolVersion": params["protocolVersion"],
                "capabilities": capabilities,
                "serverInfo": {"name": "hostile", "version": "0"},
            },
        )
    elif method in KEYS:
        answer(request_id, listing(method, params.get("cursor")))
    elif method == "prompts/get":
        answer(request_id, {"messages": PROMPT_ANSWERS[params["name"]]})
    elif method == "resources/read":
        answer(request_id, {"contents": READ_ANSWERS[params["uri"]]})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})
