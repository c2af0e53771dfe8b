"""`OpenAIBase`: what the Chat Completions and Responses providers share.

Both APIs live under the same root, take the same bearer key, answer errors
in the same envelope, stream server-sent events and are priced from the same
data; only the body each sends and how each reads the answer differ. This
class holds the shared part (options, key handling and scrubbing, the one
`httpx.AsyncClient`, error mapping, pricing, the `complete` / `stream`
skeleton); a subclass supplies the API's own mapping through the abstract
methods.
"""

from __future__ import annotations

import json
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Final, Generic, Protocol, Self, TypeVar

import httpx
from pydantic import JsonValue

from neuron_turn.loop.endpoint import parsed_endpoint
from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.http_errors import REDACTED, redact, redact_response
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
)
from neuron_turn.loop.provider_stream import ProviderStreamEvent, deltas_of

from ._errors import (
    ErrorContext,
    api_error_from_json,
    error_from_response,
    error_from_status,
    mapped_transport_errors,
    quote_prefix,
    status_for_code,
)
from ._pricing import Pricer, PriceTable, context_window, parse_prices
from ._stream import MalformedStreamError, StreamError
from ._wire import Completion

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "OpenAIBase"]

logger = logging.getLogger("neuron_provider_openai")

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
"""OpenAI's own API."""
API_KEY_ENV: Final = "OPENAI_API_KEY"
"""The environment variable the key is read from when `api_key=` is not given."""
BASE_URL_ENV: Final = "OPENAI_BASE_URL"
"""The environment variable the API root is read from when `base_url=` is not given.

The one OpenAI's own SDK reads, so a proxy or a compatible server set up for
it (vLLM, LM Studio, OpenRouter, a llama.cpp server) is used here too.
"""
DEFAULT_TIMEOUT: Final = httpx.Timeout(600.0, connect=5.0)
"""Generous read timeout (long generations), short connect timeout (a down host fails fast)."""
_SECRET_HEADER_WORDS: Final = ("key", "token", "secret", "auth", "cookie")


class EventReader(Protocol):
    """Reads one streamed answer, line by line (`_stream.StreamAccumulator` and its kin)."""

    def feed_line(self, line: str) -> Sequence[ProviderDelta]:
        """Take one line of the event stream; return the deltas it carries.

        Raises:
            StreamError: the event is an error.
            MalformedStreamError: a `data:` line is not JSON.
        """
        ...


ReaderT = TypeVar("ReaderT", bound=EventReader)


@dataclass(frozen=True, slots=True)
class _Finished:
    """The end of a streamed call: its answer, and whether it came in one piece."""

    completion: Completion
    whole: bool


class OpenAIBase(ABC, Generic[ReaderT]):
    """The shared half of `OpenAIProvider` and `OpenAIResponsesProvider` (see their docstrings).

    Args:
        model: The model used when a request names none.
        api_key: The API key; default: the `api_key_env` environment variable,
            read at the first call.
        base_url: The API root, up to and excluding the endpoint path.
            Default: the `base_url_env` environment variable when set and not
            empty, else `default_base_url`.
        require_api_key: Fail the first call when no key is found. Default:
            true only for `default_base_url`.
        headers: Extra headers on every request.
        timeout: Seconds or an `httpx.Timeout`.
        client: An `httpx.AsyncClient` to use; the caller keeps ownership.
        prices: USD per million tokens by model; wins over genai-prices.
        lookup_prices: Price unlisted models from genai-prices' data.
        body_defaults: Request body fields sent on every call.
        stream: Ask for a server-sent-event stream and assemble it.
        send_metadata: Send `request.extra["metadata"]` as the API's `metadata`.
    """

    name: ClassVar[str] = "openai"
    """The registered provider name; used in error messages and `ProviderError.provider`."""
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL
    """The API root when `base_url=` is not given."""
    api_key_env: ClassVar[str | None] = API_KEY_ENV
    """The environment variable holding the key (None: never read the environment)."""
    base_url_env: ClassVar[str | None] = BASE_URL_ENV
    """The environment variable holding the API root (None: never read the environment)."""
    price_provider_id: ClassVar[str | None] = "openai"
    """genai-prices' provider id for `default_base_url`."""
    endpoint: ClassVar[str] = "/chat/completions"
    """The path under `base_url` every call is posted to."""
    answer_noun: ClassVar[str] = "chat completion"
    """What a body should be, in error messages ("expected a JSON chat completion")."""

    def __init__(
        self,
        model: str = "",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        require_api_key: bool | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout | float | None = None,
        client: httpx.AsyncClient | None = None,
        prices: PriceTable | None = None,
        lookup_prices: bool | None = None,
        body_defaults: Mapping[str, JsonValue] | None = None,
        stream: bool = False,
        send_metadata: bool = False,
    ) -> None:
        self.model = model
        from_env = os.environ.get(self.base_url_env) if self.base_url_env else None
        self.base_url = (base_url or from_env or self.default_base_url).rstrip("/")
        is_default = self._is_default_base_url()
        self._api_key = api_key
        self._require_api_key = is_default if require_api_key is None else require_api_key
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._client = client
        self._owns_client = client is None
        self._body_defaults: dict[str, JsonValue] = dict(body_defaults or {})
        if stream:
            self._body_defaults["stream"] = True
        self._send_metadata = send_metadata
        self._pricer = Pricer(
            overrides=parse_prices(prices),
            lookup=is_default if lookup_prices is None else lookup_prices,
            provider_id=self.price_provider_id if is_default else None,
            provider_api_url=None if is_default else self.base_url,
        )
        self._url = f"{self.base_url}{self.endpoint}"
        self._post_url = parsed_endpoint(self._url)

    def __repr__(self) -> str:
        key = repr(REDACTED) if self._api_key else "None"
        name = type(self).__name__
        return f"{name}(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the provider's own HTTP client (an injected one is left to its owner)."""
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    @abstractmethod
    def request_body(self, request: ProviderRequest) -> dict[str, JsonValue]:
        """The JSON body `complete` would send for `request` (override to add fields)."""

    def context_window(self, model: str) -> int | None:
        """Return `model`'s context window in tokens (genai-prices' data), None when unknown.

        The loop compacts the conversation before it outgrows this window. For a
        compatible server, genai-prices is asked about that server's URL.
        """
        is_default = self._is_default_base_url()
        return context_window(
            model,
            provider_id=self.price_provider_id if is_default else None,
            provider_api_url=None if is_default else self.base_url,
        )

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one model call (streamed underneath when the body asks for a stream).

        Raises:
            ProviderError: a subclass saying whether a retry may help; httpx
                exceptions never escape.
        """
        model, body = self._prepared(request)
        headers = self._request_headers()
        context = self._error_context(model)
        streaming = body.get("stream") is True
        if streaming:
            self._stream_options(body)
        payload = self._encode(body)
        if streaming:
            completion = await self._stream(payload, headers, context)
        else:
            completion = await self._post(payload, headers, context)
        # An answer echoing the key (a proxy, a prompt injection) must not carry it on.
        return redact_response(self._response(completion, requested_model=model), context.secrets)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one model call as a stream: deltas as they arrive, then the response.

        The final `ProviderResponse` is the one `complete` returns for the same
        answer; closing the iterator early closes the connection.

        Raises:
            ProviderError: as `complete`; also mid-stream: an error event by its
                code, a stream cut off before its end as a retryable
                `ProviderConnectionError`.
        """
        model, body = self._prepared(request)
        body["stream"] = True
        self._stream_options(body)
        context = self._error_context(model)
        streamed = self._streamed(self._encode(body), self._request_headers(), context)
        # aclosing: a caller closing this stream early closes the connection now, not at GC.
        async with aclosing(streamed) as items:
            async for item in items:
                if not isinstance(item, _Finished):
                    yield item
                    continue
                # An answer echoing the key (a proxy, a prompt injection) must not carry it on.
                answer = redact_response(
                    self._response(item.completion, requested_model=model), context.secrets
                )
                if item.whole:
                    for piece in deltas_of(answer):
                        yield piece
                yield answer

    # --- what each API does its own way ----------------------------------------

    def _stream_options(self, body: dict[str, JsonValue]) -> None:
        """Add what a streamed call needs besides `stream: true` (nothing by default)."""

    @abstractmethod
    def _read_body(self, data: object, content: bytes, context: ErrorContext) -> Completion:
        """Read a decoded 200 body (`content`: its scrubbed bytes, to quote in errors)."""

    @abstractmethod
    def _event_reader(self) -> ReaderT:
        """A fresh reader for one streamed answer."""

    @abstractmethod
    def _finish_stream(self, reader: ReaderT, context: ErrorContext) -> Completion:
        """The answer `reader` assembled; raises when the stream did not end as it should."""

    # --- shared ----------------------------------------------------------------

    def _is_default_base_url(self) -> bool:
        return self.base_url == self.default_base_url.rstrip("/")

    def _prepared(self, request: ProviderRequest) -> tuple[str, dict[str, JsonValue]]:
        model = request.model or self.model
        if not model:
            raise InvalidRequestError(f"{self.name}: no model given", provider=self.name)
        body = self.request_body(request)
        logger.debug(
            "POST %s model=%s messages=%d tools=%d",
            self._url,
            model,
            len(request.messages),
            len(request.tools),
        )
        return model, body

    def _encode(self, body: dict[str, JsonValue]) -> bytes:
        # Encoded here, not by httpx, so a value JSON cannot hold (NaN, an object in
        # `extra`) is an InvalidRequestError rather than a bare ValueError.
        try:
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidRequestError(
                f"{self.name}: the request body is not valid JSON: {exc}", provider=self.name
            ) from exc
        return text.encode()

    def _response(self, completion: Completion, *, requested_model: str) -> ProviderResponse:
        usage = completion.usage
        logger.debug(
            "answer model=%s stop=%s input_tokens=%d output_tokens=%d",
            completion.model,
            completion.stop_reason,
            usage.input_tokens,
            usage.output_tokens,
        )
        return ProviderResponse(
            content=completion.content,
            stop_reason=completion.stop_reason,
            usage=usage,
            model=completion.model,
            cost=self._pricer.cost(usage, model=completion.model, requested_model=requested_model),
            truncated=completion.stop_reason == "max_tokens",
            hosted_calls=completion.hosted_calls,
        )

    def _api_key_value(self) -> str | None:
        if self._api_key:
            return self._api_key
        if self.api_key_env is None:
            return None
        return os.environ.get(self.api_key_env) or None

    def _request_headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._headers}
        key = self._api_key_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        elif self._require_api_key:
            raise ProviderAuthenticationError(
                f"{self.name}: no API key: {self._key_hint()}", provider=self.name
            )
        return headers

    def _key_hint(self) -> str:
        if self.api_key_env:
            return f"set the {self.api_key_env} environment variable or pass api_key="
        return "pass api_key="

    def _error_context(self, model: str) -> ErrorContext:
        key = self._api_key_value()
        # Keys given as headers (Azure's `api-key`, a proxy token) are hidden too.
        secrets = tuple(
            value
            for name, value in self._headers.items()
            if any(word in name.lower() for word in _SECRET_HEADER_WORDS)
        )
        secrets += (key,) if key else ()
        return ErrorContext(
            self.name, model, self._url, secrets, f"check the key: {self._key_hint()}"
        )

    def _http_client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout or DEFAULT_TIMEOUT)
        elif self._client.is_closed:
            raise ProviderConnectionError(
                f"{self.name}: the injected httpx.AsyncClient is closed", provider=self.name
            )
        return self._client

    def _request_timeout(self) -> Any:
        # The provider's own client already carries the timeout; an injected one keeps
        # its own unless `timeout=` was given. (httpx's sentinel type is private, hence Any.)
        if self._owns_client or self._timeout is None:
            return httpx.USE_CLIENT_DEFAULT
        return self._timeout

    async def _post(
        self, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> Completion:
        client = self._http_client()
        with mapped_transport_errors(context):
            response = await client.post(
                self._post_url, content=payload, headers=headers, timeout=self._request_timeout()
            )
        if response.status_code >= 400:
            raise error_from_response(response, context)
        return self._parse_json(response.content, context)

    def _parse_json(self, content: bytes, context: ErrorContext) -> Completion:
        # Scrubbed first: a chained decoding error keeps the whole text it was given.
        for secret in filter(None, context.secrets):
            content = content.replace(secret.encode(), REDACTED.encode())
        try:
            data = json.loads(content)
        except (ValueError, RecursionError):  # RecursionError: nested past what Python parses
            raise self._bad_body(f"a JSON {self.answer_noun}", content, context) from None
        return self._read_body(data, content, context)

    def _bad_body(self, expected: str, content: bytes, context: ErrorContext) -> ProviderError:
        prefix = quote_prefix(content, context.secrets)
        return ProviderResponseError(
            f"{self.name}: expected {expected}, got {prefix}", provider=self.name, status_code=200
        )

    def _error_in_200(
        self, data: Mapping[str, object], content: bytes, context: ErrorContext
    ) -> ProviderError:
        """A 200 carrying `{"error": …}` (OpenRouter): mapped by its HTTP-like code if any."""
        api_error = api_error_from_json(data)
        code = api_error.code if api_error is not None else None
        if isinstance(code, int) and 400 <= code <= 599:
            return error_from_status(code, api_error, headers=None, context=context)
        return self._bad_body(f"a {self.answer_noun}, not an error", content, context)

    async def _stream(
        self, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> Completion:
        async with aclosing(self._streamed(payload, headers, context)) as items:
            async for item in items:
                if isinstance(item, _Finished):
                    return item.completion
        raise AssertionError("_streamed always ends with _Finished")  # pragma: no cover

    async def _streamed(
        self, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> AsyncGenerator[ProviderDelta | _Finished]:
        """Deltas as they arrive, then the answer (last, always)."""
        client = self._http_client()
        reader = self._event_reader()
        with mapped_transport_errors(context):
            async with client.stream(
                "POST",
                self._post_url,
                content=payload,
                headers=headers,
                timeout=self._request_timeout(),
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise error_from_response(response, context)
                if response.headers.get("content-type", "").startswith("application/json"):
                    # The server ignored `stream` and answered in one piece.
                    whole = self._parse_json(await response.aread(), context)
                    yield _Finished(whole, whole=True)
                    return
                async for delta in self._deltas(response, reader, context):
                    yield delta
        yield _Finished(self._finish_stream(reader, context), whole=False)

    async def _deltas(
        self, response: httpx.Response, reader: ReaderT, context: ErrorContext
    ) -> AsyncIterator[ProviderDelta]:
        try:
            async for line in response.aiter_lines():
                # Scrubbed first: a chained decoding error keeps the line it was given.
                for delta in reader.feed_line(redact(line, context.secrets)):
                    yield delta
        except StreamError as exc:
            raise self._stream_error(exc, context) from None
        except MalformedStreamError as exc:
            raise self._bad_body("JSON event data", exc.line.encode(), context) from None

    def _cut_off(self, context: ErrorContext, events: int, end: str) -> ProviderError:
        """A stream that stopped before `end`: retryable, as a dropped connection is."""
        return ProviderConnectionError(
            f"{self.name}: the stream for model {context.model!r} was cut off after "
            f"{events} chunk(s), before its {end}; the partial answer is discarded",
            provider=self.name,
        )

    def _stream_error(self, exc: StreamError, context: ErrorContext) -> ProviderError:
        status = status_for_code(exc.api_error.code)
        return error_from_status(status, exc.api_error, headers=None, context=context)
