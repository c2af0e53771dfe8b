"""`AnthropicProvider`: the loop's `Provider` over the Anthropic Messages API."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any, ClassVar, Final, Self

import httpx

from neuron_turn.loop.endpoint import parsed_endpoint
from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.http_errors import (
    REDACTED,
    body_prefix,
    redact,
    redact_response,
    transport_errors,
)
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
)
from neuron_turn.loop.provider_stream import ProviderStreamEvent, deltas_of
from neuron_turn.loop.sse import SSEDecoder

from ._errors import error_for_event, error_for_response
from ._pricing import PriceTable, Pricing, context_window
from ._stream import MessageStream, StreamCutError, StreamedError, event_json, fold_event_stream
from ._wire import PROVIDER, JsonObject, ParsedMessage, build_body, parse_message

__all__ = [
    "API_KEY_ENV",
    "API_VERSION",
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT",
    "AnthropicProvider",
]

API_KEY_ENV: Final = "ANTHROPIC_API_KEY"
"""The environment variable read when no `api_key` is given."""
API_VERSION: Final = "2023-06-01"
"""The `anthropic-version` header this mapping was written against."""
DEFAULT_BASE_URL: Final = "https://api.anthropic.com"
BASE_URL_ENV: Final = "ANTHROPIC_BASE_URL"
"""The environment variable read when no `base_url` is given, as Anthropic's SDK reads it."""
DEFAULT_MAX_TOKENS: Final = 4096
"""Sent when a request sets no `max_tokens` (the API requires one)."""
DEFAULT_TIMEOUT: Final = httpx.Timeout(600.0, connect=5.0)
"""Generous reads, as generations are slow; quick connects, as a dead host should fail fast."""

_log = logging.getLogger(__name__)


class AnthropicProvider:
    """Calls `POST {base_url}/v1/messages` once per `complete`, over one reused httpx client.

    Example::

        async with AnthropicProvider("claude-haiku-4-5") as provider:
            response = await provider.complete(request)
    """

    output_modes: ClassVar[tuple[OutputMode, ...]] = ("tool", "prompted")
    """Typed answers come through a forced `final_answer` tool (`tool_choice: tool`)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: httpx.Timeout | float | None = None,
        client: httpx.AsyncClient | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        prices: PriceTable | None = None,
        stream: bool = False,
        headers: Mapping[str, str] | None = None,
        cache: bool = False,
    ) -> None:
        """Configure the provider; nothing is checked against the API until the first call.

        Args:
            model: The model asked for when a request names none.
            api_key: The API key; else `ANTHROPIC_API_KEY`, read at each call. A missing
                key fails the first call, not construction.
            base_url: The API root, for a proxy or gateway; else `ANTHROPIC_BASE_URL`
                (as Anthropic's SDK reads it) when set and not empty, else `DEFAULT_BASE_URL`.
            timeout: Seconds or an `httpx.Timeout`; default `DEFAULT_TIMEOUT` (for an
                injected client, default: the client's own).
            client: An `httpx.AsyncClient` to use instead of building one; it is not
                closed by `aclose`.
            max_tokens: Sent when a request sets no `max_tokens`.
            prices: USD per million tokens per model, over genai-prices' data, e.g.
                `{"my-model": {"input_mtok": "0.5", "output_mtok": "1.5"}}`.
            stream: Ask for server-sent events and fold them into one response,
                which keeps very long generations from idling out a connection.
            headers: Extra request headers, e.g. `{"anthropic-beta": "..."}`.
            cache: Mark each request's system prompt, tools and conversation so far
                for Anthropic's prompt cache (`cache_control`, 5-minute TTL): each model
                call of a turn then reads what the one before it wrote, at a tenth of
                the input price, once the prefix is long enough for the model to cache
                (1,024 tokens and up). Writing costs 1.25x the input price once.
        """
        self.model: Final = model
        root = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        self.base_url: Final = root.rstrip("/")
        self._url: Final = parsed_endpoint(f"{self.base_url}/v1/messages")
        self._api_key: Final = api_key
        self._timeout: Final = timeout
        self._max_tokens: Final = max_tokens
        self._stream: Final = stream
        self._cache: Final = cache
        self._headers: Final = dict(headers or {})
        self._pricing: Final = Pricing(prices)
        self._owns_client: Final = client is None
        self._client: Final = client or httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT if timeout is None else timeout
        )

    def __repr__(self) -> str:
        key = REDACTED if self._api_key else None
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key={key!r})"
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the httpx client, if this provider built it."""
        if self._owns_client:
            await self._client.aclose()

    def context_window(self, model: str) -> int | None:
        """Return `model`'s context window in tokens (genai-prices' data), None when unknown.

        The loop compacts the conversation before it outgrows this window.
        """
        return context_window(model, provider_id=PROVIDER)

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one Messages API call.

        Raises:
            ProviderError: a subclass saying whether a retry may help; never an httpx error.
        """
        key = self._key()
        body = build_body(
            request,
            model=self.model,
            max_tokens=self._max_tokens,
            stream=self._stream,
            cache=self._cache,
        )
        requested = str(body["model"])
        response = await self._post(body, key=key)
        if not response.is_success:
            error = error_for_response(response, model=requested, secret=key)
            _log.debug("anthropic call failed: model=%s error=%s", requested, error)
            raise error
        parsed = self._parse(response, model=requested, secret=key)
        return self._response(parsed, requested=requested, key=key)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one Messages API call as a stream: yield deltas as they arrive, then the response.

        The final `ProviderResponse` is the one `complete` returns for the same
        answer. Closing the iterator early closes the connection.

        Raises:
            ProviderError: as `complete`; also mid-stream: an `error` event by its
                type, a stream cut off before `message_stop` as a retryable
                `ProviderConnectionError`.
        """
        key = self._key()
        body = build_body(
            request, model=self.model, max_tokens=self._max_tokens, stream=True, cache=self._cache
        )
        body["stream"] = True  # even when `extra` says otherwise: the caller wants events
        requested = str(body["model"])
        what = f"the Anthropic API at {self.base_url}"
        with transport_errors(provider=PROVIDER, secrets=(key,), what=what):
            async with self._client.stream(
                "POST", self._url, **self._request_arguments(body, key=key, stream=True)
            ) as response:
                if not response.is_success:
                    await response.aread()
                    raise error_for_response(response, model=requested, secret=key)
                if not response.headers.get("content-type", "").startswith("text/event-stream"):
                    # A gateway that ignored `stream` and answered in one piece.
                    await response.aread()
                    parsed = self._parse(response, model=requested, secret=key)
                    whole = self._response(parsed, requested=requested, key=key)
                    for delta in deltas_of(whole):
                        yield delta
                    yield whole
                    return
                message = MessageStream()
                async for delta in self._deltas(response, message, model=requested, secret=key):
                    yield delta
        parsed = self._parsed_stream(message, model=requested, secret=key)
        yield self._response(parsed, requested=requested, key=key)

    async def _deltas(
        self, response: httpx.Response, message: MessageStream, *, model: str, secret: str
    ) -> AsyncIterator[ProviderDelta]:
        decoder = SSEDecoder()
        try:
            async for line in response.aiter_lines():
                # Scrubbed first: neither a delta nor a chained decoding error may hold the key.
                event = decoder.feed(redact(line, (secret,)))
                if event is None:
                    continue
                delta = message.feed(event_json(event[1]))
                if delta is not None:
                    yield delta
            last = decoder.flush()
            if last is not None:
                message.feed(event_json(last[1]))
        except StreamedError as exc:
            raise error_for_event(exc, model=model, secret=secret) from exc
        except (ValueError, RecursionError) as exc:  # WireError, or JSON nested too deep
            raise self._unexpected(exc, secret=secret, status=response.status_code) from exc

    def _parsed_stream(self, message: MessageStream, *, model: str, secret: str) -> ParsedMessage:
        try:
            return parse_message(message.result())
        except StreamCutError as exc:
            raise _cut_off(exc, model=model) from exc
        except (ValueError, RecursionError) as exc:
            raise self._unexpected(exc, secret=secret, status=200) from exc

    def _unexpected(self, exc: Exception, *, secret: str, status: int) -> ProviderError:
        return ProviderResponseError(
            f"unexpected stream from the Anthropic API ({redact(str(exc), (secret,))})",
            provider=PROVIDER,
            status_code=status,
        )

    def _response(self, parsed: ParsedMessage, *, requested: str, key: str) -> ProviderResponse:
        cost = self._pricing.cost(parsed.raw_usage, model=parsed.model, requested=requested)
        _log.debug(
            "anthropic call: model=%s answered_by=%s stop=%s input_tokens=%d output_tokens=%d",
            requested,
            parsed.model,
            parsed.stop_reason,
            parsed.usage.input_tokens,
            parsed.usage.output_tokens,
        )
        answer = ProviderResponse(
            content=parsed.content,
            stop_reason=parsed.stop_reason,
            usage=parsed.usage,
            model=parsed.model,
            cost=cost,
            truncated=parsed.truncated,
        )
        # An answer echoing the key (a proxy, a prompt injection) must not carry it on.
        return redact_response(answer, (key,))

    def _key(self) -> str:
        key = self._api_key or os.environ.get(API_KEY_ENV)
        if not key:
            raise ProviderAuthenticationError(
                f"no Anthropic API key: set {API_KEY_ENV} or pass api_key=", provider=PROVIDER
            )
        return key

    async def _post(self, body: JsonObject, *, key: str) -> httpx.Response:
        arguments = self._request_arguments(body, key=key, stream=self._stream)
        with transport_errors(
            provider=PROVIDER, secrets=(key,), what=f"the Anthropic API at {self.base_url}"
        ):
            return await self._client.post(self._url, **arguments)

    def _request_arguments(self, body: JsonObject, *, key: str, stream: bool) -> dict[str, Any]:
        headers = {
            "anthropic-version": API_VERSION,
            "accept": "text/event-stream" if stream else "application/json",
            **self._headers,
            "content-type": "application/json",
            "x-api-key": key,
        }
        try:
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        except (TypeError, ValueError) as exc:
            raise InvalidRequestError(
                f"the request holds a value that is not JSON ({exc})", provider=PROVIDER
            ) from exc
        timeout = httpx.USE_CLIENT_DEFAULT if self._timeout is None else self._timeout
        return {"content": content, "headers": headers, "timeout": timeout}

    def _parse(self, response: httpx.Response, *, model: str, secret: str) -> ParsedMessage:
        """Map a 2xx response, JSON or an event stream (whatever the API sent).

        The key is scrubbed from the body first, so neither a quoted prefix nor a
        chained decoding error (which keeps the whole text) can hold it.
        """
        text = redact(response.text, (secret,))
        try:
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                return parse_message(fold_event_stream(text))
            return parse_message(json.loads(text))
        except StreamedError as exc:
            raise error_for_event(exc, model=model, secret=secret) from exc
        except StreamCutError as exc:
            raise _cut_off(exc, model=model) from exc
        # WireError, a body that is not JSON at all, or one nested past what Python parses.
        except (ValueError, RecursionError) as exc:
            raise ProviderResponseError(
                f"unexpected response from the Anthropic API ({redact(str(exc), (secret,))}); "
                f"body starts: {body_prefix(text, secrets=(secret,))!r}",
                provider=PROVIDER,
                status_code=response.status_code,
            ) from exc


def _cut_off(exc: StreamCutError, *, model: str) -> ProviderConnectionError:
    """A stream that stopped before its end: retryable, and no partial answer is used."""
    return ProviderConnectionError(
        f"the Anthropic API stream for model {model!r} was cut off: {exc}; "
        "the partial answer is discarded",
        provider=PROVIDER,
    )
