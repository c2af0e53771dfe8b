"""`AnthropicProvider`: the loop's `Provider` over the Anthropic Messages API."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from contextlib import aclosing
from types import TracebackType
from typing import Any, ClassVar, Final, Self

import httpx
from moneyed import Money

from neuron_turn.loop.endpoint import parsed_endpoint
from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.http_body import MAX_RESPONSE_BYTES, bounded_chunks, bounded_read
from neuron_turn.loop.http_errors import (
    REDACTED,
    body_prefix,
    header_safe_key,
    redact,
    redact_response,
    transport_errors,
)
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse, TokenUsage
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
)
from neuron_turn.loop.provider_stream import ProviderStreamEvent, deltas_of
from neuron_turn.loop.sse import SSEDecoder, body_lines

from ._errors import error_for_event, error_for_response
from ._mcp import mcp_secrets
from ._name import PROVIDER
from ._pricing import PriceTable, Pricing, code_executions, context_window
from ._stream import MessageStream, StreamCutError, StreamedError, event_json, fold_event_stream
from ._wire import (
    HOSTED_TOOLS,
    SAMPLING_FIELDS,
    JsonObject,
    ParsedMessage,
    build_body,
    continued_body,
    hosted_betas,
    parse_message,
)

__all__ = [
    "API_KEY_ENV",
    "API_VERSION",
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TIMEOUT",
    "MAX_CONTINUATIONS",
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
MAX_CONTINUATIONS: Final = 4
"""How often a call paused by the API (`pause_turn`) is sent back to go on before its
answer so far is returned as truncated."""
DEFAULT_TIMEOUT: Final = httpx.Timeout(600.0, connect=5.0)
"""Generous reads, as generations are slow; quick connects, as a dead host should fail fast."""

_log = logging.getLogger(__name__)


class AnthropicProvider:
    """Calls `POST {base_url}/v1/messages` once per `complete`, over one reused httpx client.

    Beside messages and tools it maps typed answers (`output_modes`), hosted tools,
    thinking, sampling settings and strict tools (`takes_strict_tools`); each
    attribute below says how.

    Example::

        async with AnthropicProvider("claude-haiku-4-5") as provider:
            response = await provider.complete(request)
    """

    output_modes: ClassVar[tuple[OutputMode, ...]] = ("tool", "native", "prompted")
    """Typed answers come through a forced `final_answer` tool (`tool_choice: tool`) unless
    `native` is asked for: structured outputs' `output_config.format` (Claude Sonnet 4.5,
    Opus 4.1, Haiku 4.5 and later), which thinking allows where a forced tool is not."""
    max_response_bytes: int = MAX_RESPONSE_BYTES
    """The most an answer (a body, or a whole stream) may be, decompressed; past it the call
    fails as a `ProviderResponseError`. Set it on a provider to change it for that provider."""

    hosted_tools: ClassVar[frozenset[str]] = HOSTED_TOOLS
    """Web search, web fetch, code execution and remote MCP servers run on Anthropic's
    servers (all but web search with their beta flags added to `anthropic-beta`). Web
    search fees are in each call's cost; code execution's container hours are billed
    apart and are not. A `HostedMCP` server goes through the MCP connector (beta
    `mcp-client-2025-11-20`): the body's `mcp_servers` and an `mcp_toolset` per server
    (its `allowed_tools` as the toolset's allowlist); each `mcp_tool_use` the API ran is a
    `HostedToolCall("mcp", {"server", "tool", "arguments"})`. Its `authorization` token is
    redacted, as the API key is, from errors, log lines and answers. Anthropic's docs say
    the connector is not on Amazon Bedrock or Vertex AI; this provider knows only its
    `base_url`, so a gateway to those is left to answer with its own error."""
    takes_thinking: ClassVar[bool] = True
    """`ProviderRequest.thinking` becomes adaptive thinking with an `output_config.effort`
    on Claude 4.6 and later, and a `budget_tokens` (1024 for `"minimal"` up to 32768 for
    `"xhigh"`, 10000 for `True`, below `max_tokens`) before; `False` is
    `{"type": "disabled"}` where the model allows it. A `thinking` in `extra` wins."""

    takes_sampling: ClassVar[frozenset[str]] = frozenset(SAMPLING_FIELDS)
    """`top_p`, `top_k` and `stop_sequences` go into the body as they are; the API has no
    seed and no penalties, so a turn setting those is refused when made. Newer models
    answer a request with both `temperature` and `top_p`, or `top_k` beside thinking,
    with their own error."""

    takes_strict_tools: ClassVar[bool] = True
    """A strict tool (`ToolSchema.strict`) goes as structured outputs' strict tool use
    (`"strict": true`, on the models `native` output serves), its schema in the subset
    native output takes: objects closed, optional parameters left optional, what the subset
    lacks written into descriptions. A schema with no form in the subset (an object of free
    keys), or strict tools past the API's stated limits (20 tools, 24 optional and 16
    union-typed parameters), are refused before the call, naming the tools."""

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
                `{"my-model": {"input_mtok": "0.5", "output_mtok": "1.5"}}`, and
                `"web_searches_kcount"` in USD per 1,000 web searches (left out:
                genai-prices' fee for the model; searches no price covers are left
                out of the cost, and the turn warns of them once per model).
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
        """Make one Messages API call (with its continuations, when the API pauses it).

        A turn of the API's own tools that runs long comes back paused
        (`pause_turn`); it is sent back to go on, at most `MAX_CONTINUATIONS`
        times, and the parts make one response: their content in order, their
        tokens and costs added up.

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
        headers = self._headers_for(request)
        secrets = _secrets(key, request)
        parts: list[ParsedMessage] = []
        while not parts or (parts[-1].paused and len(parts) <= MAX_CONTINUATIONS):
            if parts:
                body = continued_body(body, parts[-1])
            parts.append(
                await self._call(
                    body, key=key, requested=requested, headers=headers, secrets=secrets
                )
            )
        return self._response(parts, requested=requested, secrets=secrets)

    async def _call(
        self,
        body: JsonObject,
        *,
        key: str,
        requested: str,
        headers: Mapping[str, str],
        secrets: tuple[str, ...],
    ) -> ParsedMessage:
        response = await self._post(body, key=key, headers=headers, secrets=secrets)
        if not response.is_success:
            error = error_for_response(response, model=requested, secrets=secrets)
            _log.debug("anthropic call failed: model=%s error=%s", requested, error)
            raise error
        return self._parse(response, model=requested, secrets=secrets)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one Messages API call as a stream: yield deltas as they arrive, then the response.

        The final `ProviderResponse` is the one `complete` returns for the same
        answer; a paused answer goes on as in `complete`, its continuations'
        deltas following its own. Closing the iterator early closes the connection.

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
        headers = self._headers_for(request)
        secrets = _secrets(key, request)
        parts: list[ParsedMessage] = []
        while not parts or (parts[-1].paused and len(parts) <= MAX_CONTINUATIONS):
            if parts:
                body = continued_body(body, parts[-1])
            once = self._stream_once(
                body, key=key, requested=requested, headers=headers, secrets=secrets
            )
            # Closed with this iterator: a consumer stopping early closes the connection.
            async with aclosing(once):
                async for event in once:
                    if isinstance(event, ParsedMessage):
                        parts.append(event)
                    else:
                        yield event
        yield self._response(parts, requested=requested, secrets=secrets)

    async def _stream_once(
        self,
        body: JsonObject,
        *,
        key: str,
        requested: str,
        headers: Mapping[str, str],
        secrets: tuple[str, ...],
    ) -> AsyncGenerator[ProviderDelta | ParsedMessage]:
        """One streamed call: its deltas as they arrive, then its parsed message."""
        what = f"the Anthropic API at {self.base_url}"
        with transport_errors(provider=PROVIDER, secrets=secrets, what=what):
            async with self._client.stream(
                "POST",
                self._url,
                **self._request_arguments(body, key=key, stream=True, headers=headers),
            ) as response:
                if not response.is_success:
                    error = await self._bounded(response, secrets=secrets)
                    raise error_for_response(error, model=requested, secrets=secrets)
                if not response.headers.get("content-type", "").startswith("text/event-stream"):
                    # A gateway that ignored `stream` and answered in one piece.
                    response = await self._bounded(response, secrets=secrets)
                    parsed = self._parse(response, model=requested, secrets=secrets)
                    whole = self._response([parsed], requested=requested, secrets=secrets)
                    for delta in deltas_of(whole):
                        yield delta
                    yield parsed
                    return
                message = MessageStream()
                deltas = self._deltas(response, message, model=requested, secrets=secrets)
                async for delta in deltas:
                    yield delta
        yield self._parsed_stream(message, model=requested, secrets=secrets)

    async def _deltas(
        self,
        response: httpx.Response,
        message: MessageStream,
        *,
        model: str,
        secrets: tuple[str, ...],
    ) -> AsyncIterator[ProviderDelta]:
        decoder = SSEDecoder()
        try:
            chunks = bounded_chunks(
                response,
                limit=self.max_response_bytes,
                provider=PROVIDER,
                what=redact(f"the Anthropic API at {self.base_url}", secrets),
            )
            async for line in body_lines(chunks):
                # Scrubbed first: neither a delta nor a chained decoding error may hold a secret.
                event = decoder.feed(redact(line, secrets))
                if event is None:
                    continue
                delta = message.feed(event_json(event[1]))
                if delta is not None:
                    yield delta
            last = decoder.flush()
            if last is not None:
                message.feed(event_json(last[1]))
        except StreamedError as exc:
            raise error_for_event(exc, model=model, secrets=secrets) from exc
        except (ValueError, RecursionError) as exc:  # WireError, or JSON nested too deep
            raise self._unexpected(exc, secrets=secrets, status=response.status_code) from exc

    def _parsed_stream(
        self, message: MessageStream, *, model: str, secrets: tuple[str, ...]
    ) -> ParsedMessage:
        try:
            return parse_message(message.result())
        except StreamCutError as exc:
            raise _cut_off(exc, model=model) from exc
        except (ValueError, RecursionError) as exc:
            raise self._unexpected(exc, secrets=secrets, status=200) from exc

    def _unexpected(
        self, exc: Exception, *, secrets: tuple[str, ...], status: int
    ) -> ProviderError:
        return ProviderResponseError(
            f"unexpected stream from the Anthropic API ({redact(str(exc), secrets)})",
            provider=PROVIDER,
            status_code=status,
        )

    def _response(
        self, parts: list[ParsedMessage], *, requested: str, secrets: tuple[str, ...]
    ) -> ProviderResponse:
        """One response from a call and its continuations (usually one part)."""
        costs = [self._pricing.cost(p.raw_usage, model=p.model, requested=requested) for p in parts]
        unpriced = sum(
            self._pricing.unpriced_searches(p.raw_usage, model=p.model, requested=requested)
            for p in parts
        )
        last = parts[-1]
        stop, truncated = last.stop_reason, any(p.truncated for p in parts)
        if last.paused:
            _log.warning(
                "anthropic call: model=%s still paused after %d continuations; "
                "the answer so far is kept as truncated",
                requested,
                MAX_CONTINUATIONS,
            )
            stop, truncated = "max_tokens", True
        usage = parts[0].usage if len(parts) == 1 else _added(p.usage for p in parts)
        calls = tuple(call for p in parts for call in p.hosted_calls)
        _log.debug(
            "anthropic call: model=%s answered_by=%s stop=%s input_tokens=%d output_tokens=%d",
            requested,
            last.model,
            stop,
            usage.input_tokens,
            usage.output_tokens,
        )
        answer = ProviderResponse(
            content=tuple(part for p in parts for part in p.content),
            stop_reason=stop,
            usage=usage,
            model=last.model,
            cost=_total(costs),
            truncated=truncated,
            hosted_calls=calls,
            unpriced_web_searches=unpriced,
            unpriced_code_executions=code_executions(calls),
        )
        # An answer echoing the key or an MCP server's token (a proxy, a prompt
        # injection, a server's result) must not carry it on.
        return redact_response(answer, secrets)

    def _key(self) -> str:
        source = "api_key=" if self._api_key else f"${API_KEY_ENV}"
        given = self._api_key or os.environ.get(API_KEY_ENV)
        key = header_safe_key(given, provider=PROVIDER, source=source)
        if not key:
            raise ProviderAuthenticationError(
                f"no Anthropic API key: set {API_KEY_ENV} or pass api_key=", provider=PROVIDER
            )
        return key

    async def _post(
        self,
        body: JsonObject,
        *,
        key: str,
        headers: Mapping[str, str],
        secrets: tuple[str, ...],
    ) -> httpx.Response:
        arguments = self._request_arguments(body, key=key, stream=self._stream, headers=headers)
        with transport_errors(
            provider=PROVIDER, secrets=secrets, what=f"the Anthropic API at {self.base_url}"
        ):
            request = self._client.build_request("POST", self._url, **arguments)
            response = await self._client.send(request, stream=True)
            return await self._bounded(response, secrets=secrets)

    async def _bounded(
        self, response: httpx.Response, *, secrets: tuple[str, ...]
    ) -> httpx.Response:
        """`response`, streamed unread, read whole within `max_response_bytes` (`bounded_read`)."""
        return await bounded_read(
            response,
            limit=self.max_response_bytes,
            provider=PROVIDER,
            what=redact(f"the Anthropic API at {self.base_url}", secrets),
        )

    def _headers_for(self, request: ProviderRequest) -> Mapping[str, str]:
        """The caller's headers, with the beta flags the request's hosted tools need added."""
        betas = hosted_betas(request.hosted_tools)
        if not betas:
            return self._headers
        headers = {k: v for k, v in self._headers.items() if k.lower() != "anthropic-beta"}
        given = [v for k, v in self._headers.items() if k.lower() == "anthropic-beta"]
        flags = [f.strip() for value in given for f in value.split(",") if f.strip()]
        headers["anthropic-beta"] = ",".join(dict.fromkeys([*flags, *betas]))
        return headers

    def _request_arguments(
        self, body: JsonObject, *, key: str, stream: bool, headers: Mapping[str, str]
    ) -> dict[str, Any]:
        headers = {
            "anthropic-version": API_VERSION,
            "accept": "text/event-stream" if stream else "application/json",
            **headers,
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

    def _parse(
        self, response: httpx.Response, *, model: str, secrets: tuple[str, ...]
    ) -> ParsedMessage:
        """Map a 2xx response, JSON or an event stream (whatever the API sent).

        The secrets are scrubbed from the body first, so neither a quoted prefix nor
        a chained decoding error (which keeps the whole text) can hold one.
        """
        text = redact(response.text, secrets)
        try:
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                return parse_message(fold_event_stream(text))
            return parse_message(json.loads(text))
        except StreamedError as exc:
            raise error_for_event(exc, model=model, secrets=secrets) from exc
        except StreamCutError as exc:
            raise _cut_off(exc, model=model) from exc
        # WireError, a body that is not JSON at all, or one nested past what Python parses.
        except (ValueError, RecursionError) as exc:
            raise ProviderResponseError(
                f"unexpected response from the Anthropic API ({redact(str(exc), secrets)}); "
                f"body starts: {body_prefix(text, secrets=secrets)!r}",
                provider=PROVIDER,
                status_code=response.status_code,
            ) from exc


def _secrets(key: str, request: ProviderRequest) -> tuple[str, ...]:
    """What a call must never let out: the API key and the request's MCP servers' tokens."""
    return (key, *mcp_secrets(request.hosted_tools))


def _total(costs: list[Money | None]) -> Money | None:
    """The costs of a call and its continuations together; unknown if one is unknown."""
    known = [cost for cost in costs if cost is not None]
    if len(known) < len(costs):
        return None
    return sum(known[1:], start=known[0])


def _added(usages: Iterable[TokenUsage]) -> TokenUsage:
    """The tokens of a call and its continuations together.

    A cache count none of them reported stays unknown (None).
    """
    total = list(usages)

    def cache(values: list[int | None]) -> int | None:
        return None if all(v is None for v in values) else sum(v or 0 for v in values)

    return TokenUsage(
        input_tokens=sum(u.input_tokens for u in total),
        output_tokens=sum(u.output_tokens for u in total),
        cache_read_tokens=cache([u.cache_read_tokens for u in total]),
        cache_creation_tokens=cache([u.cache_creation_tokens for u in total]),
    )


def _cut_off(exc: StreamCutError, *, model: str) -> ProviderConnectionError:
    """A stream that stopped before its end: retryable, and no partial answer is used."""
    return ProviderConnectionError(
        f"the Anthropic API stream for model {model!r} was cut off: {exc}; "
        "the partial answer is discarded",
        provider=PROVIDER,
    )
