"""`HttpProvider`: the shared half of a provider that posts JSON to an HTTP model API.

Options, the key (from `api_key=` or environment variables, sent in a
configurable header), scrubbing of secrets from errors and answers, the one
reused `httpx.AsyncClient`, and the `complete` / `stream` skeleton live here; a
subclass supplies its API's own part through the abstract methods (the URL,
the body, reading a 200 body and a stream, mapping error responses).
"""

from __future__ import annotations

import json
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import AbstractContextManager, aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Final, Generic, Protocol, Self, TypeVar

import httpx
from moneyed import Money
from pydantic import JsonValue

from .events import ProviderDelta
from .hosted_tools import HostedToolCall
from .http_body import MAX_RESPONSE_BYTES, bounded_chunks, bounded_read
from .http_errors import (
    REDACTED,
    body_prefix,
    header_safe_key,
    redact,
    redact_response,
    transport_errors,
    utf8,
)
from .provider import ProviderRequest, ProviderResponse, StopReason, TokenUsage
from .provider_errors import (
    InvalidRequestError,
    ModelNotFoundError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
)
from .provider_stream import ProviderStreamEvent, deltas_of

__all__ = [
    "DEFAULT_TIMEOUT",
    "SECRET_HEADER_WORDS",
    "Completion",
    "ErrorContext",
    "HttpProvider",
    "Pricing",
    "mapped_transport_errors",
    "quote_prefix",
    "status_error",
    "unexpected_error_body",
]

DEFAULT_TIMEOUT: Final = httpx.Timeout(600.0, connect=5.0)
"""Generous read timeout (long generations), short connect timeout (a down host fails fast)."""
SECRET_HEADER_WORDS: Final = ("key", "token", "secret", "auth", "cookie")
"""A header whose name holds one of these words carries a secret and is scrubbed from errors."""


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """What an error message needs besides the response: who, which model, where, what to hide."""

    provider: str
    model: str
    url: str
    secrets: Sequence[str] = ()
    auth_hint: str = ""


def quote_prefix(body: bytes | str, secrets: Sequence[str] = ()) -> str:
    """Return the start of `body`, redacted and quoted, for an error message."""
    prefix = body_prefix(body, secrets=secrets)
    return repr(prefix) if prefix else "an empty body"


def unexpected_error_body(body: bytes, context: ErrorContext) -> str:
    """The detail for an error body in no dialect the API speaks: its start, redacted and quoted.

    Quoted redacted: the cut could otherwise keep part of an echoed key.
    """
    return f"unexpected error body {quote_prefix(body, context.secrets)}"


def status_error(
    cls: type[ProviderError],
    status: int,
    detail: str,
    *,
    context: ErrorContext,
    kind: str = "",
    retry_after: float | None = None,
) -> ProviderError:
    """Build the `cls` error for an HTTP error `status`: `detail` and `kind` said by the body.

    A 404 names the model and the URL, an authentication error ends with the
    context's hint; the message is scrubbed of the context's secrets.
    """
    message = f"{context.provider}: HTTP {status}{kind}: {detail}"
    if cls is ModelNotFoundError:
        message = (
            f"{context.provider}: model {context.model!r} not found "
            f"(HTTP 404 from {context.url}): {detail}"
        )
    elif cls is ProviderAuthenticationError and context.auth_hint:
        message = f"{message} ({context.auth_hint})"
    return cls(
        redact(message, context.secrets),
        provider=context.provider,
        status_code=status,
        retry_after=retry_after,
    )


def mapped_transport_errors(context: ErrorContext) -> AbstractContextManager[None]:
    """`neuron_turn.loop.http_errors.transport_errors` for the call `context` describes."""
    return transport_errors(
        provider=context.provider,
        secrets=context.secrets,
        what=f"{context.provider}: the API at {context.url}",
    )


class Completion(Protocol):
    """An answer read into provider types, before it is priced."""

    @property
    def content(self) -> Sequence[Any]:
        """The answer's content parts."""
        ...

    @property
    def stop_reason(self) -> StopReason:
        """Why the model stopped."""
        ...

    @property
    def usage(self) -> TokenUsage:
        """The call's token usage."""
        ...

    @property
    def model(self) -> str:
        """The model that answered."""
        ...

    @property
    def hosted_calls(self) -> Sequence[HostedToolCall]:
        """What the API's hosted tools did for the answer."""
        ...


class Pricing(Protocol):
    """Prices one call from its usage (a plugin's `Pricer`)."""

    def cost(self, usage: TokenUsage, *, model: str, requested_model: str) -> Money | None:
        """The call's cost, or None when the model's price is unknown."""
        ...


CompletionT = TypeVar("CompletionT", bound=Completion)
ReaderT = TypeVar("ReaderT")


@dataclass(frozen=True, slots=True)
class _Finished(Generic[CompletionT]):
    """The end of a streamed call: its answer, and whether it came in one piece."""

    completion: CompletionT
    whole: bool


class HttpProvider(ABC, Generic[CompletionT, ReaderT]):
    """A `neuron_turn.Provider` over an HTTP JSON API, less what is the API's own.

    Subclasses set the class attributes and implement the abstract methods;
    they must set `self._pricer` in `__init__`.

    Args:
        model: The model used when a request names none.
        api_key: The API key; default: the first set of `api_key_envs`,
            read at each call.
        base_url: The API root. Default: the `base_url_env` environment
            variable when set and not empty, else `default_base_url`.
        require_api_key: Fail the first call when no key is found. Default:
            true only for `default_base_url` (a proxy may add the key itself).
        headers: Extra headers on every request.
        timeout: Seconds or an `httpx.Timeout`. Default: `DEFAULT_TIMEOUT` for
            the provider's own client, the injected client's own otherwise.
        client: An `httpx.AsyncClient` to use; the caller keeps ownership.
            Default: one client built on first use and reused for every call.
    """

    name: ClassVar[str] = "http"
    """The registered provider name; used in error messages and `ProviderError.provider`."""
    default_base_url: ClassVar[str] = ""
    """The API root when `base_url=` is not given."""
    base_url_env: ClassVar[str | None] = None
    """The environment variable holding the API root (None: never read the environment)."""
    api_key_envs: ClassVar[tuple[str, ...]] = ()
    """The environment variables the key is read from, in order."""
    api_key_header: ClassVar[str] = "Authorization"
    """The header the key is sent in."""
    api_key_prefix: ClassVar[str] = "Bearer "
    """What goes before the key in its header."""
    answer_noun: ClassVar[str] = "answer"
    """What a 200 body should be, in error messages ("expected a JSON answer")."""
    logger: ClassVar[logging.Logger] = logging.getLogger("neuron_turn.http_provider")
    """Where requests and answers are logged (at DEBUG)."""
    max_response_bytes: int = MAX_RESPONSE_BYTES
    """The most an answer (a body, or a whole stream) may be, decompressed; past it the call
    fails as a `ProviderResponseError`. Set it on a provider to change it for that provider."""

    _pricer: Pricing

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
    ) -> None:
        self.model = model
        from_env = os.environ.get(self.base_url_env) if self.base_url_env else None
        self.base_url = (base_url or from_env or self.default_base_url).rstrip("/")
        self._api_key = api_key
        self._key_envs = self._api_key_names()
        if require_api_key is None:
            require_api_key = self._is_default_base_url()
        self._require_api_key = require_api_key
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._client = client
        self._owns_client = client is None
        self._log_url = self.base_url

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

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one model call (streamed underneath when `_wants_stream` says so).

        Raises:
            ProviderError: a subclass saying whether a retry may help; httpx
                exceptions never escape.
        """
        model, body = self._prepared(request)
        headers = self._request_headers()
        context = self._error_context(model, request)
        if self._wants_stream(body):
            self._stream_body(body)
            completion = await self._stream(model, self._encode(body), headers, context)
        else:
            completion = await self._post(model, self._encode(body), headers, context)
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
        self._stream_body(body)
        context = self._error_context(model, request)
        streamed = self._streamed(model, self._encode(body), self._request_headers(), context)
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

    @abstractmethod
    def _endpoint(self, model: str, *, stream: bool) -> httpx.URL | str:
        """The URL a call to `model` is posted to (parse it once: httpx parses text each call)."""

    def _wants_stream(self, body: dict[str, JsonValue]) -> bool:
        """Whether `complete` streams underneath (no by default)."""
        return False

    def _stream_body(self, body: dict[str, JsonValue]) -> None:
        """Make `body` ask for a stream (nothing by default: the URL says it)."""

    @abstractmethod
    def _read_body(self, data: object, content: bytes, context: ErrorContext) -> CompletionT:
        """Read a decoded 200 body (`content`: its scrubbed bytes, to quote in errors)."""

    @abstractmethod
    def _event_reader(self) -> ReaderT:
        """A fresh reader for one streamed answer."""

    @abstractmethod
    def _deltas(
        self, response: httpx.Response, reader: ReaderT, context: ErrorContext
    ) -> AsyncGenerator[ProviderDelta, None]:
        """Feed the stream's lines to `reader`, scrubbed; yield the deltas; map its errors."""

    @abstractmethod
    def _finish_stream(self, reader: ReaderT, context: ErrorContext) -> CompletionT:
        """The answer `reader` assembled; raises when the stream did not end as it should."""

    @abstractmethod
    def _error_from_response(
        self, response: httpx.Response, context: ErrorContext
    ) -> ProviderError:
        """The provider error for a read HTTP error `response`."""

    def _api_key_names(self) -> tuple[str, ...]:
        """The environment variables the key is read from (read once, at construction)."""
        return self.api_key_envs

    def _is_default_base_url(self) -> bool:
        return self.base_url == self.default_base_url.rstrip("/")

    # --- shared ----------------------------------------------------------------

    def _prepared(self, request: ProviderRequest) -> tuple[str, dict[str, JsonValue]]:
        model = request.model or self.model
        if not model:
            raise InvalidRequestError(f"{self.name}: no model given", provider=self.name)
        body = self.request_body(request)
        self.logger.debug(
            "POST %s model=%s messages=%d tools=%d",
            self._log_url,
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
        except (TypeError, ValueError, RecursionError) as exc:
            raise InvalidRequestError(
                f"{self.name}: the request body is not valid JSON: {exc}", provider=self.name
            ) from exc
        return text.encode("utf-8", "surrogatepass")

    def _cost(self, completion: CompletionT, *, requested_model: str) -> Money | None:
        """The call's cost from its usage; a subclass whose answer says more may price by it."""
        return self._pricer.cost(
            completion.usage, model=completion.model, requested_model=requested_model
        )

    def _unpriced_searches(self, completion: CompletionT, *, requested_model: str) -> int:
        """The call's hosted web searches its cost leaves out, no price covering them.

        0 here; a provider whose API runs searches says how many went unpriced, and
        the loop warns of them (`ProviderResponse.unpriced_web_searches`).
        """
        return 0

    def _response(self, completion: CompletionT, *, requested_model: str) -> ProviderResponse:
        usage = completion.usage
        self.logger.debug(
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
            cost=self._cost(completion, requested_model=requested_model),
            truncated=completion.stop_reason == "max_tokens",
            hosted_calls=completion.hosted_calls,
            unpriced_web_searches=self._unpriced_searches(
                completion, requested_model=requested_model
            ),
        )

    def _api_key_value(self) -> str | None:
        """The key to send: `api_key=`, else the first key variable set, stripped and checked.

        Raises:
            ProviderAuthenticationError: it holds what no header can carry.
        """
        if self._api_key:
            return header_safe_key(self._api_key, provider=self.name, source="api_key=")
        for name in self._key_envs:
            value = os.environ.get(name)
            if value:
                return header_safe_key(value, provider=self.name, source=f"${name}")
        return None

    def _request_headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._headers}
        key = self._api_key_value()
        if key:
            headers[self.api_key_header] = self.api_key_prefix + key
        elif self._require_api_key:
            raise ProviderAuthenticationError(
                f"{self.name}: no API key: {self._key_hint()}", provider=self.name
            )
        return headers

    def _key_hint(self) -> str:
        if self._key_envs:
            names = " or ".join(self._key_envs)
            return f"set the {names} environment variable or pass api_key="
        return "pass api_key="

    def _request_secrets(self, request: ProviderRequest) -> tuple[str, ...]:
        """Secrets `request`'s body carries besides the key (a remote MCP server's token).

        Redacted from the call's errors, scrubbed lines and answer as the key is.
        """
        return ()

    def _error_context(self, model: str, request: ProviderRequest | None = None) -> ErrorContext:
        key = self._api_key_value()
        # Keys given as headers (Azure's `api-key`, a proxy token) are hidden too.
        secrets = tuple(
            value
            for name, value in self._headers.items()
            if any(word in name.lower() for word in SECRET_HEADER_WORDS)
        )
        secrets += (key,) if key else ()
        if request is not None:
            secrets += self._request_secrets(request)
        url = str(self._endpoint(model, stream=False))
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

    async def _post(
        self, model: str, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> CompletionT:
        url = self._endpoint(model, stream=False)
        with mapped_transport_errors(context):
            response = await self._send("POST", url, context, headers=headers, content=payload)
        if response.status_code >= 400:
            raise self._error_from_response(response, context)
        return self._parse_json(response.content, context)

    async def _send(
        self,
        method: str,
        url: httpx.URL | str,
        context: ErrorContext,
        *,
        headers: dict[str, str],
        content: bytes | None = None,
    ) -> httpx.Response:
        """Send one request; its answer read whole within `max_response_bytes` (`bounded_read`).

        httpx's errors are the caller's to map (`mapped_transport_errors`).
        """
        client = self._http_client()
        request = client.build_request(
            method, url, content=content, headers=headers, timeout=self._request_timeout()
        )
        return await self._bounded(await client.send(request, stream=True), context)

    async def _bounded(self, response: httpx.Response, context: ErrorContext) -> httpx.Response:
        """`response`, streamed unread, read whole within `max_response_bytes` (`bounded_read`)."""
        return await bounded_read(
            response, limit=self.max_response_bytes, provider=self.name, what=self._sender(context)
        )

    def _chunks(self, response: httpx.Response, context: ErrorContext) -> AsyncIterator[bytes]:
        """A stream's decompressed chunks, within `max_response_bytes` (`bounded_chunks`)."""
        return bounded_chunks(
            response, limit=self.max_response_bytes, provider=self.name, what=self._sender(context)
        )

    def _sender(self, context: ErrorContext) -> str:
        return redact(f"{self.name}: the API at {context.url}", context.secrets)

    def _parse_json(self, content: bytes, context: ErrorContext) -> CompletionT:
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
            redact(f"{self.name}: expected {expected}, got {prefix}", context.secrets),
            provider=self.name,
            status_code=200,
        )

    def _cut_off(self, context: ErrorContext, events: int, end: str) -> ProviderError:
        """A stream that stopped before `end`: retryable, as a dropped connection is."""
        return ProviderConnectionError(
            f"{self.name}: the stream for model {context.model!r} was cut off after "
            f"{events} chunk(s), before its {end}; the partial answer is discarded",
            provider=self.name,
        )

    async def _stream(
        self, model: str, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> CompletionT:
        async with aclosing(self._streamed(model, payload, headers, context)) as items:
            async for item in items:
                if isinstance(item, _Finished):
                    return item.completion
        raise AssertionError("_streamed always ends with _Finished")  # pragma: no cover

    async def _streamed(
        self, model: str, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> AsyncGenerator[ProviderDelta | _Finished[CompletionT]]:
        """Deltas as they arrive, then the answer (last, always)."""
        client = self._http_client()
        reader = self._event_reader()
        with mapped_transport_errors(context):
            async with client.stream(
                "POST",
                self._endpoint(model, stream=True),
                content=payload,
                headers=headers,
                timeout=self._request_timeout(),
            ) as response:
                utf8(response)
                if response.status_code >= 400:
                    error = await self._bounded(response, context)
                    raise self._error_from_response(error, context)
                if response.headers.get("content-type", "").startswith("application/json"):
                    # The server ignored the stream request and answered in one piece.
                    whole = self._parse_json(
                        (await self._bounded(response, context)).content, context
                    )
                    yield _Finished(whole, whole=True)
                    return
                # aclosing: a stream closed early ends its reader now (a background
                # response is cancelled in its `finally`), not when it is collected.
                async with aclosing(self._deltas(response, reader, context)) as deltas:
                    async for delta in deltas:
                        yield delta
        yield _Finished(self._finish_stream(reader, context), whole=False)
