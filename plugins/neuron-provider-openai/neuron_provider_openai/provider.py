"""`OpenAIProvider`: the OpenAI Chat Completions API, and any server that speaks it."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Final, Self

import httpx
from pydantic import JsonValue

from neuron_turn.loop.endpoint import parsed_endpoint
from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.http_errors import REDACTED, redact, redact_response
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

from . import _wire
from ._errors import (
    ErrorContext,
    api_error_from_json,
    error_from_response,
    error_from_status,
    mapped_transport_errors,
    quote_prefix,
)
from ._pricing import Pricer, PriceTable, context_window, parse_prices
from ._stream import MalformedStreamError, StreamAccumulator, StreamError
from ._wire import Completion, SystemRole

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "OpenAIProvider"]

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


@dataclass(frozen=True, slots=True)
class _Finished:
    """The end of a streamed call: its completion, and whether it came in one piece."""

    completion: Completion
    whole: bool


class OpenAIProvider:
    """A `neuron_turn.Provider` for `POST {base_url}/chat/completions`.

    Works with OpenAI and with OpenAI-compatible servers (vLLM, llama.cpp's
    server, Ollama's `/v1`, OpenRouter): give `base_url`. With a custom
    `base_url` the key is optional and calls cost 0 USD unless `prices=` or
    `lookup_prices=True` says otherwise.

    Subclassing for another OpenAI-compatible API: override the class
    attributes `name`, `default_base_url`, `api_key_env` and `price_provider_id`,
    pass `body_defaults=` for fields every request should carry, and
    override `request_body` for anything more.

    Args:
        model: The model used when a request names none.
        api_key: The API key; default: the `api_key_env` environment variable,
            read at the first call.
        base_url: The API root, up to and excluding `/chat/completions`.
            Default: the `base_url_env` environment variable (`OPENAI_BASE_URL`,
            as OpenAI's SDK reads it) when set and not empty, else
            `default_base_url`.
        require_api_key: Fail the first call when no key is found. Default:
            true only for `default_base_url` (local servers need no key).
        headers: Extra headers on every request (e.g. `OpenAI-Organization`,
            or `api-key` for Azure with `require_api_key=False`).
        timeout: Seconds or an `httpx.Timeout`. Default: `DEFAULT_TIMEOUT` for
            the provider's own client, the injected client's own otherwise.
        client: An `httpx.AsyncClient` to use; the caller keeps ownership
            (`aclose()` leaves it open). Default: one client built on first
            use and reused for every call.
        prices: `{model: {"input_mtok": "0.15", "output_mtok": "0.6",
            "cache_read_mtok": "0.075"}}` in USD per million tokens; wins over
            genai-prices. Looked up by the answered model, then the requested one.
        lookup_prices: Price unlisted models from genai-prices' data. Default:
            true for `default_base_url` (unknown model: cost None), false for a
            custom `base_url` (unlisted model: 0 USD).
        body_defaults: Request body fields sent on every call (e.g.
            `{"seed": 7}`, `{"reasoning_effort": "low"}`); built fields and then
            `request.extra` override them.
        system_role: The role of the system prompt: `"system"`, `"developer"`
            or `"user"`. Default: by model name (see
            `_wire.default_system_role`: `developer` for o1/o3/o4/gpt-5,
            `user` for o1-mini/o1-preview, else `system`).
        max_tokens_field: The body field `request.max_tokens` goes to. Default
            `max_completion_tokens`: `max_tokens` is deprecated by OpenAI and
            rejected by reasoning models. Use `"max_tokens"` for servers that
            only know the old name.
        stream: Ask for a server-sent-event stream and assemble it (keeps
            long generations clear of the read timeout). Also on when
            `request.extra` sets `"stream": True`.
        reasoning_field: Send `ThinkingPart`s of assistant messages back in this
            field (`"reasoning"` for Ollama, which gpt-oss needs to continue a
            tool loop; `"reasoning_content"` for vLLM). Default None: dropped,
            as OpenAI keeps reasoning server-side.
        send_metadata: Send `request.extra["metadata"]` (the caller's trace
            metadata) as the API's `metadata` field. Off by default: OpenAI
            accepts it only for stored completions, and other servers may
            reject an unknown field.
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
    output_modes: ClassVar[tuple[OutputMode, ...]] = ("native", "tool", "prompted")
    """Typed answers use `response_format: json_schema` unless told otherwise (a compatible
    server without it: pass `output_mode="tool"` or `"prompted"` in `NeuronTurnConfig`)."""

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
        system_role: SystemRole | None = None,
        max_tokens_field: str = "max_completion_tokens",
        stream: bool = False,
        reasoning_field: str | None = None,
        send_metadata: bool = False,
    ) -> None:
        self.model = model
        from_env = os.environ.get(self.base_url_env) if self.base_url_env else None
        self.base_url = (base_url or from_env or self.default_base_url).rstrip("/")
        is_default = self.base_url == self.default_base_url.rstrip("/")
        self._api_key = api_key
        self._require_api_key = is_default if require_api_key is None else require_api_key
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._client = client
        self._owns_client = client is None
        self._body_defaults: dict[str, JsonValue] = dict(body_defaults or {})
        if stream:
            self._body_defaults["stream"] = True
        self._system_role = system_role
        self._max_tokens_field = max_tokens_field
        self._send_metadata = send_metadata
        self._reasoning_field = reasoning_field
        self._pricer = Pricer(
            overrides=parse_prices(prices),
            lookup=is_default if lookup_prices is None else lookup_prices,
            provider_id=self.price_provider_id if is_default else None,
            provider_api_url=None if is_default else self.base_url,
        )
        self._url = f"{self.base_url}/chat/completions"
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

    def request_body(self, request: ProviderRequest) -> dict[str, JsonValue]:
        """The JSON body `complete` would send for `request` (override to add fields).

        Raises:
            InvalidRequestError: a message holds content the API cannot take.
        """
        model = request.model or self.model
        role = self._system_role or _wire.default_system_role(model)
        try:
            return _wire.request_body(
                request,
                model=model,
                system_role=role,
                max_tokens_field=self._max_tokens_field,
                defaults=self._body_defaults,
                send_metadata=self._send_metadata,
                reasoning_field=self._reasoning_field,
            )
        except _wire.UnsupportedContentError as exc:
            raise InvalidRequestError(f"{self.name}: {exc}", provider=self.name) from exc

    def context_window(self, model: str) -> int | None:
        """Return `model`'s context window in tokens (genai-prices' data), None when unknown.

        The loop compacts the conversation before it outgrows this window. For a
        compatible server, genai-prices is asked about that server's URL.
        """
        is_default = self.base_url == self.default_base_url.rstrip("/")
        return context_window(
            model,
            provider_id=self.price_provider_id if is_default else None,
            provider_api_url=None if is_default else self.base_url,
        )

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one chat completion call.

        Raises:
            ProviderError: a subclass saying whether a retry may help; httpx
                exceptions never escape.
        """
        model, body = self._prepared(request)
        headers = self._request_headers()
        context = self._error_context(model)
        streaming = body.get("stream") is True
        if streaming:
            body.setdefault("stream_options", {"include_usage": True})
        payload = self._encode(body)
        if streaming:
            completion = await self._stream(payload, headers, context)
        else:
            completion = await self._post(payload, headers, context)
        # An answer echoing the key (a proxy, a prompt injection) must not carry it on.
        return redact_response(self._response(completion, requested_model=model), context.secrets)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one chat completion call as a stream: deltas as they arrive, then the response.

        Always asks for server-sent events with `stream_options.include_usage`
        (unless `request.extra` sets `stream_options` itself), so the last
        chunk carries the call's usage. The final `ProviderResponse` is the
        one `complete` returns for the same answer; closing the iterator
        early closes the connection.

        Raises:
            ProviderError: as `complete`; also mid-stream: an error object in
                the stream by its code, a stream cut off before its end as a
                retryable `ProviderConnectionError`.
        """
        model, body = self._prepared(request)
        body["stream"] = True
        body.setdefault("stream_options", {"include_usage": True})
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
            raise self._bad_body("a JSON chat completion", content, context) from None
        if isinstance(data, dict) and "error" in data and "choices" not in data:
            raise self._error_in_200(data, content, context)
        try:
            return _wire.parse_completion(data, fallback_model=context.model)
        except _wire.MalformedCompletionError as exc:
            raise self._bad_body(f"a chat completion ({exc})", content, context) from None

    def _bad_body(self, expected: str, content: bytes, context: ErrorContext) -> ProviderError:
        prefix = quote_prefix(content, context.secrets)
        return ProviderResponseError(
            f"{self.name}: expected {expected}, got {prefix}", provider=self.name, status_code=200
        )

    def _error_in_200(
        self, data: dict[str, object], content: bytes, context: ErrorContext
    ) -> ProviderError:
        """A 200 carrying `{"error": …}` (OpenRouter): mapped by its HTTP-like code if any."""
        api_error = api_error_from_json(data)
        code = api_error.code if api_error is not None else None
        if isinstance(code, int) and 400 <= code <= 599:
            return error_from_status(code, api_error, headers=None, context=context)
        return self._bad_body("a chat completion, not an error", content, context)

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
        """Deltas as they arrive, then the completion (last, always)."""
        client = self._http_client()
        accumulator = StreamAccumulator()
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
                async for delta in self._deltas(response, accumulator, context):
                    yield delta
        yield _Finished(self._completion(accumulator, context), whole=False)

    async def _deltas(
        self, response: httpx.Response, accumulator: StreamAccumulator, context: ErrorContext
    ) -> AsyncIterator[ProviderDelta]:
        try:
            async for line in response.aiter_lines():
                # Scrubbed first: a chained decoding error keeps the line it was given.
                for delta in accumulator.feed_line(redact(line, context.secrets)):
                    yield delta
        except StreamError as exc:
            raise self._stream_error(exc, context) from None
        except MalformedStreamError as exc:
            raise self._bad_body("JSON event data", exc.line.encode(), context) from None

    def _completion(self, accumulator: StreamAccumulator, context: ErrorContext) -> Completion:
        if accumulator.chunks == 0:
            raise self._bad_body("a stream of chat completion chunks", b"", context)
        if not accumulator.complete:
            raise ProviderConnectionError(
                f"{self.name}: the stream for model {context.model!r} was cut off after "
                f"{accumulator.chunks} chunk(s), before its finish_reason; "
                "the partial answer is discarded",
                provider=self.name,
            )
        return _wire.parse_completion(accumulator.body(), fallback_model=context.model)

    def _stream_error(self, exc: StreamError, context: ErrorContext) -> ProviderError:
        code = exc.api_error.code
        status = code if isinstance(code, int) and 400 <= code <= 599 else 500
        return error_from_status(status, exc.api_error, headers=None, context=context)
