"""`GoogleProvider`: Google's Gemini API (`models/{model}:generateContent`) as a provider."""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Final, Self
from urllib.parse import quote

import httpx
from pydantic import JsonValue

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

from . import _answer as answer
from . import _wire as wire
from ._errors import (
    ErrorContext,
    api_error_from_json,
    error_from_response,
    error_from_status,
    mapped_transport_errors,
    quote_prefix,
    status_of,
)
from ._pricing import Pricer, PriceTable, context_window, parse_prices
from ._stream import ChunkReader, MalformedStreamError, StreamError

__all__ = ["API_KEY_ENVS", "BASE_URL_ENV", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "GoogleProvider"]

logger = logging.getLogger("neuron_provider_google")

DEFAULT_BASE_URL: Final = "https://generativelanguage.googleapis.com/v1beta"
"""The Gemini API (Google AI Studio keys), up to and excluding `/models/...`."""
API_KEY_ENVS: Final = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""The environment variables the key is read from, in order, when `api_key=` is not given."""
BASE_URL_ENV: Final = "GOOGLE_GEMINI_BASE_URL"
"""The environment variable the API root is read from when `base_url=` is not given
(the one Google's own `google-genai` SDK reads)."""
DEFAULT_TIMEOUT: Final = httpx.Timeout(600.0, connect=5.0)
"""Generous read timeout (long generations), short connect timeout (a down host fails fast)."""
_KEY_HEADER: Final = "x-goog-api-key"
_SECRET_HEADER_WORDS: Final = ("key", "token", "secret", "auth", "cookie")


@dataclass(frozen=True, slots=True)
class _Finished:
    """The end of a streamed call: its answer, and whether it came in one piece."""

    completion: answer.Completion
    whole: bool


class GoogleProvider:
    """A `neuron_turn.Provider` for the Gemini API (`models/{model}:generateContent`).

    Reached as `"google:<model>"`, e.g. `"google:gemini-2.5-flash"`. The key
    goes in the `x-goog-api-key` header, never in the URL, so no log line or
    error quoting a URL can hold it. Streams with
    `:streamGenerateContent?alt=sse`. See the distribution's README for how
    each part of a conversation is mapped.

    Args:
        model: The model used when a request names none (`gemini-2.5-flash`,
            or `models/...`, `tunedModels/...`).
        api_key: The API key; default: `GEMINI_API_KEY`, then `GOOGLE_API_KEY`,
            read at the first call.
        base_url: The API root, up to and excluding `/models`. Default:
            `GOOGLE_GEMINI_BASE_URL` when set and not empty, else Google's.
        require_api_key: Fail the first call when no key is found. Default:
            true only for Google's own URL (a proxy may add the key itself).
        headers: Extra headers on every request.
        timeout: Seconds or an `httpx.Timeout`. Default: `DEFAULT_TIMEOUT` for
            the provider's own client, the injected client's own otherwise.
        client: An `httpx.AsyncClient` to use; the caller keeps ownership.
            Default: one client built on first use and reused for every call.
        prices: `{model: {"input_mtok": ..., "output_mtok": ...,
            "cache_read_mtok": ...}}` in USD per million tokens; wins over
            genai-prices.
        lookup_prices: Price unlisted models from genai-prices' data for
            Google (unknown model: cost None). Default: true.
        body_defaults: Request body fields sent on every call (e.g.
            `{"safetySettings": [...]}` or `{"generationConfig": {"thinkingConfig":
            {"thinkingBudget": 0}}}`); built fields and then `request.extra`
            override them (`generationConfig` and `toolConfig` field by field).
        stream: Have `complete` stream underneath and assemble the answer.
        include_thoughts: Ask for thought summaries
            (`thinkingConfig.includeThoughts`), which arrive as `ThinkingPart`s.
            Only thinking models take it (Gemini 2.5 and later).
    """

    name: ClassVar[str] = wire.PROVIDER
    """The registered provider name; used in error messages and `ProviderError.provider`."""
    output_modes: ClassVar[tuple[OutputMode, ...]] = ("native", "tool", "prompted")
    """Typed answers use `responseJsonSchema` on calls that offer no tools."""
    hosted_tools: ClassVar[frozenset[str]] = wire.HOSTED_TOOLS
    """Google Search (`web_search`), URL context (`web_fetch`) and code execution run on
    Google's servers, without limits: the API has no field for uses, domains or a
    location, so a hosted tool setting one is refused before the call. Code the model
    ran and its output stay in the history and go back on later calls. Search
    grounding's per-prompt fee is not in the cost."""
    takes_thinking: ClassVar[bool] = True
    """`ProviderRequest.thinking` becomes `thinkingConfig`: a `thinkingLevel` on Gemini 3, a
    `thinkingBudget` before it (`False`: 0), with `includeThoughts` so the thoughts reach
    the turn; a `thinkingConfig` in `body_defaults` or `extra` wins."""

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
        lookup_prices: bool = True,
        body_defaults: Mapping[str, JsonValue] | None = None,
        stream: bool = False,
        include_thoughts: bool = False,
    ) -> None:
        self.model = model
        from_env = os.environ.get(BASE_URL_ENV)
        self.base_url = (base_url or from_env or DEFAULT_BASE_URL).rstrip("/")
        is_default = self.base_url == DEFAULT_BASE_URL
        self._api_key = api_key
        self._require_api_key = is_default if require_api_key is None else require_api_key
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._client = client
        self._owns_client = client is None
        self._body_defaults: dict[str, JsonValue] = dict(body_defaults or {})
        self._stream_by_default = stream
        self._include_thoughts = include_thoughts
        self._pricer = Pricer(parse_prices(prices), lookup=lookup_prices)
        self._urls: dict[tuple[str, bool], httpx.URL | str] = {}
        self._calls = itertools.count(1)

    def __repr__(self) -> str:
        key = repr(REDACTED) if self._api_key else "None"
        return f"GoogleProvider(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"

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
        try:
            return wire.request_body(
                request,
                defaults=self._body_defaults,
                include_thoughts=self._include_thoughts,
                model=request.model or self.model,
            )
        except wire.UnsupportedContentError as exc:
            raise InvalidRequestError(f"{self.name}: {exc}", provider=self.name) from exc

    def context_window(self, model: str) -> int | None:
        """Return `model`'s context window in tokens (genai-prices' data), None when unknown.

        The loop compacts the conversation before it outgrows this window.
        """
        return context_window(model)

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one model call (streamed underneath with `stream=True`).

        Raises:
            ProviderError: a subclass saying whether a retry may help; httpx
                exceptions never escape.
        """
        model, payload = self._prepared(request)
        context = self._error_context(model)
        headers = self._request_headers()
        if self._stream_by_default:
            completion = await self._stream(model, payload, headers, context)
        else:
            completion = await self._post(model, payload, headers, context)
        # An answer echoing the key (a proxy, a prompt injection) must not carry it on.
        return redact_response(self._response(completion, requested_model=model), context.secrets)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one model call as a stream: deltas as they arrive, then the response.

        The final `ProviderResponse` is the one `complete` returns for the same
        answer; closing the iterator early closes the connection.

        Raises:
            ProviderError: as `complete`; also mid-stream: an error event by its
                code, a stream cut off before its last chunk as a retryable
                `ProviderConnectionError`.
        """
        model, payload = self._prepared(request)
        context = self._error_context(model)
        streamed = self._streamed(model, payload, self._request_headers(), context)
        # aclosing: a caller closing this stream early closes the connection now, not at GC.
        async with aclosing(streamed) as items:
            async for item in items:
                if not isinstance(item, _Finished):
                    yield item
                    continue
                # An answer echoing the key (a proxy, a prompt injection) must not carry it on.
                response = redact_response(
                    self._response(item.completion, requested_model=model), context.secrets
                )
                if item.whole:
                    for piece in deltas_of(response):
                        yield piece
                yield response

    # --- the request --------------------------------------------------------------

    def _prepared(self, request: ProviderRequest) -> tuple[str, bytes]:
        model = request.model or self.model
        if not model:
            raise InvalidRequestError(f"{self.name}: no model given", provider=self.name)
        body = self.request_body(request)
        logger.debug(
            "POST %s model=%s messages=%d tools=%d",
            self.base_url,
            model,
            len(request.messages),
            len(request.tools),
        )
        return model, self._encode(body)

    def _encode(self, body: dict[str, JsonValue]) -> bytes:
        # Encoded here, not by httpx, so a value JSON cannot hold (NaN, an object in
        # `extra`) is an InvalidRequestError rather than a bare ValueError.
        try:
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise InvalidRequestError(
                f"{self.name}: the request body is not valid JSON: {exc}", provider=self.name
            ) from exc
        return text.encode("utf-8", "surrogatepass")

    def _url(self, model: str, *, stream: bool) -> httpx.URL | str:
        """The endpoint for `model`, parsed once per model (httpx parses text on every call)."""
        key = (model, stream)
        url = self._urls.get(key)
        if url is None:
            path = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
            method = ":streamGenerateContent?alt=sse" if stream else ":generateContent"
            text = f"{self.base_url}/{quote(path, safe='/')}{method}"
            try:
                url = httpx.URL(text)
            except httpx.InvalidURL:
                url = text  # the call fails on it with the provider's own error
            self._urls[key] = url
        return url

    def _api_key_value(self) -> str | None:
        if self._api_key:
            return self._api_key
        return next((os.environ[name] for name in API_KEY_ENVS if os.environ.get(name)), None)

    def _request_headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._headers}
        key = self._api_key_value()
        if key:
            headers[_KEY_HEADER] = key
        elif self._require_api_key:
            raise ProviderAuthenticationError(
                f"{self.name}: no API key: {self._key_hint()}", provider=self.name
            )
        return headers

    def _key_hint(self) -> str:
        names = " or ".join(API_KEY_ENVS)
        return f"set the {names} environment variable or pass api_key="

    def _error_context(self, model: str) -> ErrorContext:
        key = self._api_key_value()
        # Keys given as headers (a proxy's token) are hidden too.
        secrets = tuple(
            value
            for name, value in self._headers.items()
            if any(word in name.lower() for word in _SECRET_HEADER_WORDS)
        )
        secrets += (key,) if key else ()
        url = str(self._url(model, stream=False))
        return ErrorContext(self.name, model, url, secrets, f"check the key: {self._key_hint()}")

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

    # --- the answer ---------------------------------------------------------------

    async def _post(
        self, model: str, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> answer.Completion:
        client = self._http_client()
        with mapped_transport_errors(context):
            response = await client.post(
                self._url(model, stream=False),
                content=payload,
                headers=headers,
                timeout=self._request_timeout(),
            )
        if response.status_code >= 400:
            raise error_from_response(response, context)
        return self._parse_json(response.content, context)

    def _parse_json(self, content: bytes, context: ErrorContext) -> answer.Completion:
        # Scrubbed first: a chained decoding error keeps the whole text it was given.
        for secret in filter(None, context.secrets):
            content = content.replace(secret.encode(), REDACTED.encode())
        try:
            data = json.loads(content)
        except (ValueError, RecursionError):  # RecursionError: nested past what Python parses
            raise self._bad_body("a JSON GenerateContentResponse", content, context) from None
        if isinstance(data, list) and data and all(isinstance(chunk, dict) for chunk in data):
            # `:streamGenerateContent` without `alt=sse` (a proxy dropped it): an array of chunks.
            reader = self._reader()
            for chunk in data:
                self._feed(reader, chunk, context)
            return self._finish_stream(reader, context)
        return self._read_body(data, content, context)

    def _read_body(self, data: object, content: bytes, context: ErrorContext) -> answer.Completion:
        if isinstance(data, dict) and "error" in data and "candidates" not in data:
            api_error = api_error_from_json(data)
            if api_error is not None:
                raise error_from_status(
                    status_of(api_error), api_error, headers=None, context=context
                )
        return self._parsed(data, content, context)

    def _parsed(self, data: object, content: bytes, context: ErrorContext) -> answer.Completion:
        try:
            return answer.parse_response(
                data, fallback_model=context.model, fallback_salt=self._salt()
            )
        except answer.MalformedResponseError as exc:
            raise self._bad_body(f"a GenerateContentResponse ({exc})", content, context) from None
        except answer.UnusableAnswerError as exc:
            raise ProviderResponseError(
                redact(f"{self.name}: {exc}", context.secrets), provider=self.name, status_code=200
            ) from None
        except answer.BlockedRequestError as exc:
            raise InvalidRequestError(
                redact(f"{self.name}: {exc}", context.secrets), provider=self.name, status_code=200
            ) from None

    def _salt(self) -> str:
        return f"{id(self)}-{next(self._calls)}"

    def _bad_body(self, expected: str, content: bytes, context: ErrorContext) -> ProviderError:
        prefix = quote_prefix(content, context.secrets)
        return ProviderResponseError(
            redact(f"{self.name}: expected {expected}, got {prefix}", context.secrets),
            provider=self.name,
            status_code=200,
        )

    def _response(self, completion: answer.Completion, *, requested_model: str) -> ProviderResponse:
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

    # --- streaming ----------------------------------------------------------------

    async def _stream(
        self, model: str, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> answer.Completion:
        async with aclosing(self._streamed(model, payload, headers, context)) as items:
            async for item in items:
                if isinstance(item, _Finished):
                    return item.completion
        raise AssertionError("_streamed always ends with _Finished")  # pragma: no cover

    async def _streamed(
        self, model: str, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> AsyncGenerator[ProviderDelta | _Finished]:
        """Deltas as they arrive, then the answer (last, always)."""
        client = self._http_client()
        reader = self._reader()
        with mapped_transport_errors(context):
            async with client.stream(
                "POST",
                self._url(model, stream=True),
                content=payload,
                headers=headers,
                timeout=self._request_timeout(),
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise error_from_response(response, context)
                if response.headers.get("content-type", "").startswith("application/json"):
                    # The server ignored `alt=sse` and answered in one piece.
                    whole = self._parse_json(await response.aread(), context)
                    yield _Finished(whole, whole=True)
                    return
                async for delta in self._deltas(response, reader, context):
                    yield delta
        yield _Finished(self._finish_stream(reader, context), whole=False)

    def _reader(self) -> ChunkReader:
        return ChunkReader(fallback_salt=self._salt())

    async def _deltas(
        self, response: httpx.Response, reader: ChunkReader, context: ErrorContext
    ) -> AsyncIterator[ProviderDelta]:
        try:
            async for line in response.aiter_lines():
                # Scrubbed first: a chained decoding error keeps the line it was given.
                for delta in reader.feed_line(redact(line, context.secrets)):
                    yield delta
            for delta in reader.flush():
                yield delta
        except StreamError as exc:
            raise self._stream_error(exc, context) from None
        except MalformedStreamError as exc:
            raise self._bad_body("JSON event data", exc.data.encode(), context) from None

    def _feed(self, reader: ChunkReader, chunk: object, context: ErrorContext) -> None:
        try:
            reader.feed_chunk(chunk)
        except StreamError as exc:
            raise self._stream_error(exc, context) from None

    def _finish_stream(self, reader: ChunkReader, context: ErrorContext) -> answer.Completion:
        if reader.events == 0:
            raise self._bad_body("a stream of GenerateContentResponse chunks", b"", context)
        if not reader.complete:
            raise ProviderConnectionError(
                f"{self.name}: the stream for model {context.model!r} was cut off after "
                f"{reader.events} chunk(s), before its finishReason; the partial answer is "
                "discarded",
                provider=self.name,
            )
        return self._parsed(reader.body(), b"", context)

    def _stream_error(self, exc: StreamError, context: ErrorContext) -> ProviderError:
        api_error = exc.api_error
        return error_from_status(status_of(api_error), api_error, headers=None, context=context)
