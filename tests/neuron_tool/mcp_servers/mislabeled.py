"""An MCP peer written by hand whose images are not what their media type says.

Its tool `jpeg_as_png` answers a JPEG labelled image/png, and `text_as_png` bytes
that are no image at all labelled image/png; its prompts of the same names hold
such an image, and its resources `file:///jpeg.png` and `file:///text.png` are
such blobs. A model API refuses an image whose bytes are not its media type, and
with it the whole model request.
"""

from __future__ import annotations

import base64
import json
import sys

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF a photo"
TEXT = b"<script>no image at all</script>"
BYTES = {"jpeg_as_png": JPEG, "text_as_png": TEXT}
URIS = {"file:///jpeg.png": JPEG, "file:///text.png": TEXT}


def image(name: str) -> dict[str, object]:
    data = base64.b64encode(BYTES[name]).decode()
    return {"type": "image", "data": data, "mimeType": "image/png"}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def answer(request_id: object, result: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        method, request_id = request.get("method"), request.get("id")
        params = request.get("params") or {}
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            capabilities = {"tools": {}, "prompts": {}, "resources": {}}
            answer(
                request_id,
                {
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": capabilities,
                    "serverInfo": {"name": "mislabeled", "version": "0"},
                },
            )
        elif method == "tools/list":
            schema = {"type": "object", "properties": {}}
            answer(request_id, {"tools": [{"name": n, "inputSchema": schema} for n in BYTES]})
        elif method == "tools/call":
            answer(request_id, {"content": [image(params["name"])]})
        elif method == "prompts/list":
            answer(request_id, {"prompts": [{"name": name} for name in BYTES]})
        elif method == "prompts/get":
            answer(request_id, {"messages": [{"role": "user", "content": image(params["name"])}]})
        elif method == "resources/read":
            blob = base64.b64encode(URIS[params["uri"]]).decode()
            contents = {"uri": params["uri"], "mimeType": "image/png", "blob": blob}
            answer(request_id, {"contents": [contents]})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})


if __name__ == "__main__":
    main()
