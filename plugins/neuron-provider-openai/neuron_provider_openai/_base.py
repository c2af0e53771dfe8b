"""`OpenAIBase`: what the Chat Completions and Responses providers share.

Both APIs live under the same root, take the same bearer key, answer errors
in the same envelope, stream server-sent events and are priced from the same
data; only the body each sends and how each reads the answer differ. This
class holds the shared part (options, key handling and scrubbing, the one
`httpx.AsyncClient`, error mapping, pricing, the `complete` / `stream`
skeleton, strict tools); a subclass supplies the API's own mapping through the
abstract methods.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import ClassVar, Final, Protocol, TypeVar

import httpx
from moneyed import Money
from pydantic import JsonValue

from neuron_turn.loop.endpoint import parsed_endpoint
from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.hosted_tools import HostedMCP
from neuron_turn.loop.http_errors import redact
from neuron_turn.loop.http_provider import DEFAULT_TIMEOUT, ErrorContext, HttpProvider
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse
from neuron_turn.loop.provider_errors import InvalidRequestError, ProviderError
from neuron_turn.loop.provider_stream import ProviderStreamEvent
from neuron_turn.loop.sse import body_lines

from ._errors import api_error_from_json, error_from_response, error_from_status, status_for_code
from ._pricing import Pricer, PriceTable, context_window, parse_prices
from ._stream import MalformedStreamError, StreamError
from ._wire import Completion, StrictForms, UnsupportedContentError, restore_calls, strict_forms

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "OpenAIBase"]

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
"""OpenAI's own API."""
API_KEY_ENV: Final = "OPENAI_API_KEY"
"""The environment variable the key is read from when `api_key=` is not given."""
BASE_URL_ENV: Final = "OPENAI_BASE_URL"
"""The environment variable the API root is read from when `base_url=` is not given.

The one OpenAI's own SDK reads, so a proxy or a compatible server set up for
it (vLLM, LM Studio, OpenRouter, a llama.cpp server) is used here too.
"""


def _any_strict(request: ProviderRequest) -> bool:
    # A plain loop, not any() over a generator: it runs on every call, strict tools or not.
    for tool in request.tools:
        if tool.strict is True:
            return True
    return False


def request_secrets(request: ProviderRequest) -> tuple[str, ...]:
    """The secrets `request`'s body carries besides the API key: its MCP servers' tokens."""
    return tuple(
        tool.authorization
        for tool in request.hosted_tools
        if isinstance(tool, HostedMCP) and tool.authorization
    )


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


class OpenAIBase(HttpProvider[Completion, ReaderT]):
    """The shared half of `OpenAIProvider` and `OpenAIResponsesProvider` (see their docstrings).

    A call offering strict tools writes each one's strict form once: the body sends
    it, and the answer's calls of those tools are read back through it
    (`StrictForm.restore`) before the loop sees them.

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
        prices: USD per million tokens by model (and per 1,000 hosted web searches,
            `web_searches_kcount`; left out: genai-prices' fee for the model, and
            searches no price covers are left out of the cost with a warning); wins
            over genai-prices.
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
    logger: ClassVar[logging.Logger] = logging.getLogger("neuron_provider_openai")
    """Where requests and answers are logged (at DEBUG)."""
    _pricer: Pricer
    takes_strict_tools: ClassVar[bool] = False
    """Whether a strict tool (`ToolSchema.strict`) is sent in the API's strict mode; where
    not, a request offering one is refused before it is sent."""
    infers_strict_tools: ClassVar[bool] = True
    """Whether, where strict tools are taken, a typed turn's final-answer tool leaving
    `strict` None is made strict when its schema fits strict mode as it is, as pydantic-ai
    infers `strict` for OpenAI (`neuron_turn.loop.strict_tools.infers_strict_tools`)."""

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
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            require_api_key=require_api_key,
            headers=headers,
            timeout=timeout,
            client=client,
        )
        is_default = self._is_default_base_url()
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
        self._log_url = self._url

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

    def _cost(self, completion: Completion, *, requested_model: str) -> Money | None:
        # Audio tokens are priced at the model's audio prices (gpt-audio's are 13x its text's);
        # the Responses API's hosted web searches at their fee per search.
        return self._pricer.cost(
            completion.usage,
            model=completion.model,
            requested_model=requested_model,
            audio=completion.audio_tokens,
            web_searches=completion.web_searches,
        )

    def _unpriced_searches(self, completion: Completion, *, requested_model: str) -> int:
        return self._pricer.unpriced_searches(
            model=completion.model,
            requested_model=requested_model,
            web_searches=completion.web_searches,
        )

    # --- strict tools ------------------------------------------------------------

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one model call (see `HttpProvider.complete`); strict tools' calls read back.

        Raises:
            ProviderError: as `HttpProvider.complete`; an `InvalidRequestError` before
                anything is sent for a strict tool with no strict form, or one offered
                where the API has no strict mode.
        """
        if not _any_strict(request):
            return await super().complete(request)
        forms = self._strict_forms(request)
        response = await super().complete(request)
        return replace(response, content=restore_calls(response.content, forms))

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one model call as a stream (see `HttpProvider.stream`).

        The final response has strict tools' calls read back as `complete`'s has; the
        deltas before it carry the arguments as the model wrote them.
        """
        if not _any_strict(request):
            return super().stream(request)
        return self._strict_stream(request)

    async def _strict_stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        forms = self._strict_forms(request)
        events = super().stream(request)
        try:
            async for event in events:
                if isinstance(event, ProviderResponse):
                    event = replace(event, content=restore_calls(event.content, forms))
                yield event
        finally:
            # Closed now, not when collected: a caller closing this stream early closes
            # the connection at once.
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    def _strict_forms(self, request: ProviderRequest) -> StrictForms:
        """The strict form of each strict tool of `request` (the body's, kept by `strict_form`).

        Raises:
            InvalidRequestError: a strict tool's schema has no strict form (naming the
                tool, where and why), or the API has no strict mode.
        """
        if not self.takes_strict_tools:
            named = ", ".join(tool.name for tool in request.tools if tool.strict is True)
            raise InvalidRequestError(
                f"{self.name}: the API has no documented strict mode for tool inputs, and "
                f"the tool(s) {named} ask for it (strict=True); make them strict=None",
                provider=self.name,
            )
        try:
            return strict_forms(request.tools)
        except UnsupportedContentError as exc:
            raise InvalidRequestError(f"{self.name}: {exc}", provider=self.name) from exc

    # --- what each API does its own way ----------------------------------------

    def _stream_options(self, body: dict[str, JsonValue]) -> None:
        """Add what a streamed call needs besides `stream: true` (nothing by default)."""

    # --- shared by both APIs -----------------------------------------------------

    def _api_key_names(self) -> tuple[str, ...]:
        return (self.api_key_env,) if self.api_key_env else ()

    def _request_secrets(self, request: ProviderRequest) -> tuple[str, ...]:
        return request_secrets(request)

    def _endpoint(self, model: str, *, stream: bool) -> httpx.URL | str:
        return self._post_url

    def _wants_stream(self, body: dict[str, JsonValue]) -> bool:
        return body.get("stream") is True

    def _stream_body(self, body: dict[str, JsonValue]) -> None:
        body["stream"] = True
        self._stream_options(body)

    def _error_from_response(
        self, response: httpx.Response, context: ErrorContext
    ) -> ProviderError:
        return error_from_response(response, context)

    def _error_in_200(
        self, data: Mapping[str, object], content: bytes, context: ErrorContext
    ) -> ProviderError:
        """A 200 carrying `{"error": …}` (OpenRouter): mapped by its HTTP-like code if any."""
        api_error = api_error_from_json(data)
        code = api_error.code if api_error is not None else None
        if isinstance(code, int) and 400 <= code <= 599:
            return error_from_status(code, api_error, headers=None, context=context)
        return self._bad_body(f"a {self.answer_noun}, not an error", content, context)

    async def _deltas(
        self, response: httpx.Response, reader: ReaderT, context: ErrorContext
    ) -> AsyncGenerator[ProviderDelta, None]:
        try:
            async for line in body_lines(self._chunks(response, context)):
                # Scrubbed first: a chained decoding error keeps the line it was given.
                for delta in reader.feed_line(redact(line, context.secrets)):
                    yield delta
        except StreamError as exc:
            raise self._stream_error(exc, context) from None
        except MalformedStreamError as exc:
            raise self._bad_body("JSON event data", exc.line.encode(), context) from None

    def _stream_error(self, exc: StreamError, context: ErrorContext) -> ProviderError:
        status = status_for_code(exc.api_error.code)
        return error_from_status(status, exc.api_error, headers=None, context=context)
