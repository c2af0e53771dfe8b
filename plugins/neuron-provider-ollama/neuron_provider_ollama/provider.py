"""`OllamaProvider`: one `/api/chat` call per `complete()`, local server or Ollama cloud."""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from types import TracebackType
from typing import Any, ClassVar, Final, Self

import httpx

from neuron_turn.loop.endpoint import parsed_endpoint
from neuron_turn.loop.events import TextDelta, ThinkingDelta
from neuron_turn.loop.http_body import MAX_RESPONSE_BYTES, bounded_chunks, bounded_read
from neuron_turn.loop.http_errors import REDACTED, body_prefix, redact, redact_response, utf8
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderError,
    ProviderResponseError,
)
from neuron_turn.loop.provider_stream import ProviderStreamEvent, deltas_of
from neuron_turn.loop.sse import body_lines

from ._errors import API_KEY_ENV, PROVIDER, error_from_response, map_transport_errors, redact_error
from ._host import resolve_base_url
from ._pricing import PricesOption, cost_of, parse_prices
from ._stream import StreamAccumulator
from ._wire import SAMPLING_OPTIONS, build_chat_body, parse_chat_response, stream_requested

__all__ = ["DEFAULT_TIMEOUT", "OllamaProvider"]

logger = logging.getLogger("neuron_provider_ollama")

DEFAULT_TIMEOUT: Final = httpx.Timeout(600.0, connect=10.0)
"""Ten minutes to answer, ten seconds to connect: a cold model load alone can take minutes."""

_JSON_HEADERS: Final = {"content-type": "application/json", "accept": "application/json"}


class OllamaProvider:
    """The Ollama native chat API (`POST {base_url}/api/chat`) as a `neuron_turn.Provider`.

    Args:
        model: The model used when a request leaves `model` empty.
        base_url: The server; defaults to `OLLAMA_HOST`, then `http://localhost:11434`.
            `host:port` without a scheme is accepted, as the `ollama` CLI does.
        api_key: Sent as a Bearer token, for Ollama cloud (`https://ollama.com`);
            defaults to `OLLAMA_API_KEY`. A local server needs none.
        timeout: Per-call timeout (seconds or an `httpx.Timeout`), also applied
            to calls made through an injected client.
        client: An `httpx.AsyncClient` to use instead of building one; the
            provider never closes a client it was given.
        prices: USD per million tokens by model, e.g.
            `{"llama3.2": {"input_mtok": "0.1", "output_mtok": "0.4"}}`; an
            unpriced model costs `Money("0", "USD")`.
        stream: Have `complete` ask for the NDJSON stream and fold it into one
            response: the read timeout then applies between lines, not to the
            whole answer. `request.extra["stream"]` overrides it per call.
            (`stream()` always streams.)
    """

    output_modes: ClassVar[tuple[OutputMode, ...]] = ("native", "tool", "prompted")
    """Typed answers use `format: <JSON Schema>` on calls that offer no tools."""
    max_response_bytes: int = MAX_RESPONSE_BYTES
    """The most an answer (a body, or a whole stream) may be, decompressed; past it the call
    fails as a `ProviderResponseError`. Set it on a provider to change it for that provider."""
    takes_thinking: ClassVar[bool] = True
    """`ProviderRequest.thinking` becomes `think`: true or false, or for gpt-oss models
    the nearest of `"low"`, `"medium"`, `"high"`. A `think` in `extra` wins."""
    takes_sampling: ClassVar[frozenset[str]] = frozenset(SAMPLING_OPTIONS)
    """Every sampling setting, in `options`: `top_p`, `top_k`, `stop`, `seed`,
    `presence_penalty`, `frequency_penalty`; the same field in `extra["options"]` wins."""

    def __init__(
        self,
        model: str | None = None,
        /,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: httpx.Timeout | float | None = DEFAULT_TIMEOUT,
        client: httpx.AsyncClient | None = None,
        prices: PricesOption | None = None,
        stream: bool = False,
    ) -> None:
        self.model = model
        self.base_url = resolve_base_url(base_url)
        self.stream_by_default = stream
        self._api_key = _header_safe_key(
            api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
        )
        self._timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self._prices = parse_prices(prices)
        self._chat_url = parsed_endpoint(f"{self.base_url}/api/chat")
        self._headers = dict(_JSON_HEADERS)
        if self._api_key:
            self._headers["authorization"] = f"Bearer {self._api_key}"
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=self._timeout)
        self._calls = itertools.count(1)

    def __repr__(self) -> str:
        key = repr(REDACTED) if self._api_key else "None"
        return (
            f"OllamaProvider(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key={key}, stream={self.stream_by_default!r})"
        )

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one chat call.

        Raises:
            ProviderError: a subclass saying whether a retry may help; never an httpx error.
        """
        try:
            return await self._complete(request)
        except ProviderError as exc:
            scrubbed = self._scrubbed_error(exc)
            if scrubbed is exc:
                raise
            raise scrubbed from None

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one chat call as an NDJSON stream: deltas as lines arrive, then the response.

        Text and thinking arrive as they are generated; tool calls, which
        Ollama sends whole, are announced when the stream ends (their ids
        depend on its final line). Closing the iterator early closes the
        connection.

        Raises:
            ProviderError: as `complete`; a stream cut off before its `done`
                line is a retryable `ProviderConnectionError`.
        """
        # One generator, not one wrapping another: each event passes one frame, not three.
        try:
            model = self._model(request)
            body = json.dumps(build_chat_body(request, model=model, stream=True)).encode()
            logger.debug("POST %s model=%s stream=True", self._chat_url, model)
            accumulator = StreamAccumulator()
            with map_transport_errors(base_url=self.base_url, secret=self._api_key):
                response = await self._send_streaming(body)
                try:
                    if not response.is_success:
                        raise self._status_error(await self._bounded(response), model)
                    async for line in body_lines(self._chunks(response)):
                        for delta in accumulator.feed_line(self._scrubbed(line)):
                            yield delta
                finally:
                    await response.aclose()
            answer = self._answer(accumulator.body(), model)
        except ProviderError as exc:
            scrubbed = self._scrubbed_error(exc)
            if scrubbed is exc:
                raise
            raise scrubbed from None
        for delta in deltas_of(answer):
            if not isinstance(delta, TextDelta | ThinkingDelta):
                yield delta
        yield answer

    def _scrubbed_error(self, exc: ProviderError) -> ProviderError:
        if self._api_key and self._api_key in exc.message:
            return redact_error(exc, self._api_key)
        return exc

    def _model(self, request: ProviderRequest) -> str:
        model = request.model or self.model
        if not model:
            raise InvalidRequestError(
                "no model: set ProviderRequest.model or give OllamaProvider a model",
                provider=PROVIDER,
            )
        return model

    async def _complete(self, request: ProviderRequest) -> ProviderResponse:
        model = self._model(request)
        stream = stream_requested(request, default=self.stream_by_default)
        body = json.dumps(build_chat_body(request, model=model, stream=stream)).encode()
        logger.debug("POST %s model=%s stream=%s", self._chat_url, model, stream)
        with map_transport_errors(base_url=self.base_url, secret=self._api_key):
            data = await (self._post_streaming(body, model) if stream else self._post(body, model))
        return self._answer(data, model)

    def _answer(self, data: Any, model: str) -> ProviderResponse:
        response = parse_chat_response(
            data, requested_model=model, fallback_salt=f"{id(self)}-{next(self._calls)}"
        )
        logger.debug(
            "ollama answered model=%s stop=%s tokens=%d/%d",
            response.model,
            response.stop_reason,
            response.usage.input_tokens,
            response.usage.output_tokens,
        )
        cost = cost_of(self._prices, response.usage, model=response.model, requested_model=model)
        # The body was scrubbed as text; this also catches a key written with JSON escapes.
        return redact_response(replace(response, cost=cost), (self._api_key,))

    async def _post(self, body: bytes, model: str) -> Any:
        response = await self._bounded(await self._send_streaming(body))
        if not response.is_success:
            raise self._status_error(response, model)
        content = self._scrubbed(response.text)
        try:
            return json.loads(content)
        except (ValueError, RecursionError):  # RecursionError: nested past what Python parses
            raise ProviderResponseError(
                f"Ollama answered {response.status_code} with a body that is not JSON: "
                f"{body_prefix(content)}",
                provider=PROVIDER,
                status_code=response.status_code,
            ) from None

    async def _send_streaming(self, body: bytes) -> httpx.Response:
        request = self._client.build_request(
            "POST", self._chat_url, content=body, headers=self._headers, timeout=self._timeout
        )
        return utf8(await self._client.send(request, stream=True))

    async def _post_streaming(self, body: bytes, model: str) -> Any:
        response = await self._send_streaming(body)
        try:
            if not response.is_success:
                raise self._status_error(await self._bounded(response), model)
            accumulator = StreamAccumulator()
            async for line in body_lines(self._chunks(response)):
                accumulator.feed_line(self._scrubbed(line))
            return accumulator.body()
        finally:
            await response.aclose()

    async def _bounded(self, response: httpx.Response) -> httpx.Response:
        """`response`, streamed unread, read whole within `max_response_bytes` (`bounded_read`)."""
        return await bounded_read(
            response, limit=self.max_response_bytes, provider=PROVIDER, what=self._sender()
        )

    def _chunks(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """A stream's decompressed chunks, within `max_response_bytes` (`bounded_chunks`)."""
        return bounded_chunks(
            response, limit=self.max_response_bytes, provider=PROVIDER, what=self._sender()
        )

    def _sender(self) -> str:
        return self._scrubbed(f"Ollama at {self.base_url}")

    def _scrubbed(self, text: str) -> str:
        # A server echoing the key must not pass it on: not into the answer,
        # nor into an error quoting a prefix of the body (which could cut the
        # key where whole-key redaction would miss it).
        return redact(text, (self._api_key,)) if self._api_key else text

    def _status_error(self, response: httpx.Response, model: str) -> ProviderError:
        error = error_from_response(
            response.status_code,
            response.text,
            response.headers,
            model=model,
            base_url=self.base_url,
            secret=self._api_key,
        )
        logger.debug("ollama error %s: %s", response.status_code, error.message)
        return error

    async def aclose(self) -> None:
        """Close the HTTP client, unless it was injected."""
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


def _header_safe_key(key: str | None) -> str | None:
    """`key` without the space around it (a key file's newline), or None when it is empty.

    Why: a key with a newline, a control or a non-ASCII character inside cannot go in a
    header; httpx then failed each call as a retryable connection error quoting the
    header, key and all, or with a bare UnicodeEncodeError.

    Raises:
        ValueError: what is left holds such a character (the key itself is not quoted).
    """
    if key is None or not (key := key.strip()):
        return None
    if not (key.isascii() and key.isprintable()) or " " in key:
        raise ValueError(
            f"the Ollama API key (api_key= or {API_KEY_ENV}) holds a space, a control "
            "character or a non-ASCII character, which no HTTP header can carry; "
            "check it was copied whole"
        )
    return key
