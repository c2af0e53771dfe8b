"""A2A JSON-RPC over HTTP for `RemoteAgent`: bounded reads, and every failure named by kind.

Why not the SDK's client: it reads whole bodies and event lines unbounded, and
its errors quote the HTTP error as is; a remote agent is untrusted, so every
answer here is read against a byte limit as it comes, and every failure becomes
a `RemoteAgentError` naming the URL and what went wrong, never the token. The
SDK's types and ProtoJSON are used as they are.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import AsyncIterator
from typing import Any, Final, NoReturn
from urllib.parse import urlsplit

import httpx
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard, StreamResponse
from a2a.utils.constants import (
    AGENT_CARD_WELL_KNOWN_PATH,
    PROTOCOL_VERSION_CURRENT,
    VERSION_HEADER,
    TransportProtocol,
)
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage

from ._trace_context import trace_headers
from .errors import (
    RemoteAgentError,
    RemoteAnswerError,
    RemoteAuthError,
    RemoteTaskError,
    RemoteUnavailableError,
)

_ERROR_CHARS: Final = 500
# The server says it is busy in its error's message (see executor._protocol_error).
_BUSY: Final = "ServerBusyError"


class Rpc:
    """Calls to one remote agent: its card, then JSON-RPC requests to the endpoint it names."""

    def __init__(
        self, http: httpx.AsyncClient, url: str, token: str | None, max_bytes: int, timeout: float
    ) -> None:
        """Call the agent whose base URL (where its card is) is `url`.

        `timeout` bounds each request's connection and each wait for data; a given
        client's own (httpx's default: 5 s) would cut a stream that waits on a tool.
        """
        self.url = url.rstrip("/")
        self._http = http
        self._timeout = httpx.Timeout(timeout)
        self._headers = {VERSION_HEADER: PROTOCOL_VERSION_CURRENT}
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self._token = token
        self._max_bytes = max_bytes

    async def card(self) -> tuple[str, AgentCard]:
        """The agent's card and its JSON-RPC endpoint's URL.

        Raises:
            RemoteAnswerError: the card is malformed, names no JSON-RPC endpoint, or
                one on another origin (the token is never sent there).
        """
        where = self.url + AGENT_CARD_WELL_KNOWN_PATH
        async with self._send("GET", where, what="its agent card") as response:
            body = await self._body(response, "the agent card")
        try:
            card = parse_agent_card(self._json(body, where))
        except (json_format.ParseError, ValueError, TypeError):
            raise RemoteAnswerError(f"the agent card at {where} is not a valid A2A card") from None
        for interface in card.supported_interfaces:
            if interface.protocol_binding == TransportProtocol.JSONRPC.value:
                endpoint = interface.url
                if _origin(endpoint) != _origin(self.url):
                    raise RemoteAnswerError(
                        f"the agent card at {where} names its endpoint on another origin"
                        f" ({_cut(endpoint)}); the token is sent only to {_origin(self.url)}"
                    )
                return endpoint, card
        raise RemoteAnswerError(f"the agent card at {where} names no JSON-RPC endpoint")

    async def call(self, endpoint: str, method: str, params: ProtoMessage) -> dict[str, Any]:
        """The `result` of the JSON-RPC `method` with `params` (a proto request)."""
        async with self._send("POST", endpoint, json=_request(method, params)) as response:
            body = await self._body(response, f"the answer to {method}")
        return self._result(self._json(body, method), method)

    async def stream(
        self, endpoint: str, method: str, params: ProtoMessage
    ) -> AsyncIterator[StreamResponse]:
        """The events of the streaming JSON-RPC `method`, as they come.

        The whole stream is bounded by the byte limit: a remote that never stops
        sending is cut off.
        """
        headers = {"Accept": "text/event-stream"}
        payload = _request(method, params)
        async with self._send("POST", endpoint, json=payload, headers=headers) as response:
            if "text/event-stream" not in response.headers.get("content-type", ""):
                # An error comes as a plain JSON-RPC response, before any stream.
                body = await self._body(response, f"the answer to {method}")
                yield _event(self._result(self._json(body, method), method), method)
                return
            async for data in self._events(response, method):
                yield _event(self._result(self._json(data, method), method), method)

    def _send(
        self,
        verb: str,
        where: str,
        *,
        headers: dict[str, str] | None = None,
        json: Any = None,
        what: str = "the request",
    ) -> _Sending:
        request = self._http.build_request(
            verb,
            where,
            # The caller's trace goes along: the remote turn's spans join it.
            headers={**self._headers, **trace_headers(), **(headers or {})},
            json=json,
            timeout=self._timeout,
        )
        return _Sending(self, request, what)

    async def _body(self, response: httpx.Response, what: str) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            self._too_large(what)
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self._max_bytes:
                self._too_large(what)
            chunks.append(chunk)
        return b"".join(chunks)

    async def _events(self, response: httpx.Response, method: str) -> AsyncIterator[bytes]:
        """The data of each server-sent event of `response`, bounded by the byte limit."""
        size = 0
        pending = bytearray()
        data: list[bytes] = []
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self._max_bytes:
                self._too_large(f"the stream answering {method}")
            pending += chunk
            if b"\n" not in chunk:
                # Split only when a line ends: a remote sending one long line in small
                # pieces would otherwise have every piece rescan all of it (quadratic).
                continue
            *lines, rest = pending.split(b"\n")
            pending = bytearray(rest)
            for line in lines:
                line = line.rstrip(b"\r")
                if not line:
                    if data:
                        yield b"\n".join(data)
                    data = []
                elif line.startswith(b"data:"):
                    data.append(bytes(line[5:].removeprefix(b" ")))
        if data:
            yield b"\n".join(data)

    def _json(self, body: bytes, what: str) -> Any:
        try:
            return json.loads(body, parse_constant=_not_json, parse_float=_finite)
        except (ValueError, RecursionError):
            # ValueError: not JSON, not UTF-8, NaN or infinity, an integer of too many
            # digits; RecursionError: nested deeper than Python's parser goes.
            raise RemoteAnswerError(
                f"the answer to {what} from the remote agent at {self.url} is not JSON"
            ) from None

    def _too_large(self, what: str) -> NoReturn:
        raise RemoteAnswerError(
            f"{what} from the remote agent at {self.url} is larger than {self._max_bytes}"
            " bytes (max_answer_bytes); it was cut off"
        )

    def _result(self, data: Any, method: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self._malformed(method, "not a JSON-RPC response object")
        error = data.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else None
            said = _cut(self.hidden(str(message))) if message else "(no message)"
            if said.startswith(_BUSY):
                raise RemoteUnavailableError(f"the remote agent at {self.url} is busy: {said}")
            raise RemoteTaskError(f"the remote agent at {self.url} refused {method}: {said}")
        result = data.get("result")
        if not isinstance(result, dict):
            raise self._malformed(method, "no result object in it")
        return result

    def hidden(self, said: str) -> str:
        """`said` (the remote's words) with the token written `[the token]`.

        Why: a remote echoing the request's headers in an error would otherwise put
        the token in the error, and so in logs and in a delegating model's context.
        """
        return said.replace(self._token, "[the token]") if self._token else said

    def _malformed(self, method: str, why: str) -> RemoteAnswerError:
        return RemoteAnswerError(
            f"the answer to {method} from the remote agent at {self.url} is malformed: {why}"
        )

    def status_error(self, response: httpx.Response, what: str) -> RemoteAgentError:
        """The error an HTTP error status of the remote, answering `what`, means."""
        status = response.status_code
        if status in (401, 403):
            given = self._token is not None
            problem = "refused the bearer token" if given else "needs a bearer token"
            return RemoteAuthError(
                f"the remote agent at {self.url} {problem} (HTTP {status}); nothing ran there."
                " Check the token given to RemoteAgent"
            )
        if status == 429 or status >= 500:
            return RemoteUnavailableError(
                f"the remote agent at {self.url} is unavailable (HTTP {status})",
                retry_after=_retry_after(response),
            )
        return RemoteTaskError(f"the remote agent at {self.url} refused {what} (HTTP {status})")


class _Sending:
    """One request in flight: its response, or its failure as a `RemoteAgentError`."""

    def __init__(self, rpc: Rpc, request: httpx.Request, what: str) -> None:
        self._rpc = rpc
        self._request = request
        self._what = what
        self._response: httpx.Response | None = None

    async def __aenter__(self) -> httpx.Response:
        url = self._rpc.url
        try:
            response = await self._rpc._http.send(self._request, stream=True)
        except httpx.TimeoutException:
            raise RemoteUnavailableError(
                f"the remote agent at {url} did not answer in time"
            ) from None
        except httpx.TransportError as exc:
            raise RemoteUnavailableError(
                f"the remote agent at {url} could not be reached ({type(exc).__name__})"
            ) from None
        self._response = response
        if response.status_code >= 400:
            await response.aclose()
            raise self._rpc.status_error(response, self._what)
        return response

    async def __aexit__(self, *exc: object) -> None:
        if self._response is not None:
            await self._response.aclose()


def _request(method: str, params: ProtoMessage) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": method,
        "params": json_format.MessageToDict(params),
    }


def _event(result: dict[str, Any], method: str) -> StreamResponse:
    try:
        return json_format.ParseDict(result, StreamResponse(), ignore_unknown_fields=True)
    except json_format.ParseError:
        raise RemoteAnswerError(f"an event answering {method} is not a valid A2A event") from None


def _not_json(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    # NaN and infinity have no JSON form: a data part holding one could not be read.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is past what a double holds")
    return value


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _cut(text: str) -> str:
    return text if len(text) <= _ERROR_CHARS else text[:_ERROR_CHARS] + "…"
