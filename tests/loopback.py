"""A loopback HTTP server answering JSON from a thread, for code under test that blocks.

The command line runs its own event loop (`asyncio.run` inside `main`), so a
server it calls cannot share the test's: this one serves from a thread of its
own, binds 127.0.0.1 on a free port, and records every request it gets.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    """One request the server got: its method, path, headers (lower-cased) and JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """The decoded JSON body (None for a request without one)."""


@dataclass
class Server:
    """The server's address and the requests it got, in order."""

    url: str
    requests: list[Seen] = field(default_factory=list)


Answer = Callable[[Seen], tuple[int, Any]]
"""What the server answers a request with: a status and a JSON body."""


@contextmanager
def json_server(answer: Answer, *, keep_alive: bool = False) -> Iterator[Server]:
    """Serve `answer`'s replies on a loopback port until the block ends.

    `keep_alive`: speak HTTP/1.1 and keep connections open, as an API does, so a
    client's pooled connection is used again.
    """
    server = Server("")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {key.lower(): value for key, value in self.headers.items()}
            seen = Seen(self.command, self.path, headers, json.loads(raw) if raw else None)
            server.requests.append(seen)
            status, body = answer(seen)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
