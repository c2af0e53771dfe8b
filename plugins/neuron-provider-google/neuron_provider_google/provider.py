"""`GoogleProvider`: Google's Gemini API (`models/{model}:generateContent`) as a provider."""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncGenerator, Mapping
from typing import ClassVar, Final
from urllib.parse import quote

import httpx
from moneyed import Money
from pydantic import JsonValue

from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.http_errors import redact
from neuron_turn.loop.http_provider import DEFAULT_TIMEOUT, ErrorContext, HttpProvider
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import ProviderRequest
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderError,
    ProviderResponseError,
)
from neuron_turn.loop.sse import body_lines

from . import _answer as answer
from . import _wire as wire
from ._errors import (
    api_error_from_json,
    error_from_response,
    error_from_status,
    status_of,
)
from ._pricing import Pricer, PriceTable, context_window, parse_prices
from ._stream import ChunkReader, MalformedStreamError, StreamError

__all__ = ["API_KEY_ENVS", "BASE_URL_ENV", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "GoogleProvider"]

DEFAULT_BASE_URL: Final = "https://generativelanguage.googleapis.com/v1beta"
"""The Gemini API (Google AI Studio keys), up to and excluding `/models/...`."""
API_KEY_ENVS: Final = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""The environment variables the key is read from, in order, when `api_key=` is not given."""
BASE_URL_ENV: Final = "GOOGLE_GEMINI_BASE_URL"
"""The environment variable the API root is read from when `base_url=` is not given
(the one Google's own `google-genai` SDK reads)."""


class GoogleProvider(HttpProvider[answer.Completion, ChunkReader]):
    """A `neuron_turn.Provider` for the Gemini API (`models/{model}:generateContent`).

    Reached as `"google:<model>"`, e.g. `"google:gemini-2.5-flash"`. The key
    goes in the `x-goog-api-key` header, never in the URL, so no log line or
    error quoting a URL can hold it. Streams with
    `:streamGenerateContent?alt=sse`. See the distribution's README for how
    each part of a conversation is mapped.

    Strict tools (`@tool(strict=True)`) have no flag of their own on Gemini: a
    call offering one asks for a function calling mode that keeps calls to their
    schemas (`takes_strict_tools`). That mode is per request, so it applies to
    all the call's function tools together, which only narrows each to its own
    schema.

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
            "cache_read_mtok": ...}}` in USD per million tokens, and optionally
            `"web_searches_kcount"` in USD per 1,000 grounding units (left out:
            genai-prices' fee for the model; grounding no price covers is left out
            of the cost, and the turn warns of it once per model) and
            `"output_image_mtok"` for the images the
            model makes (left out: at `output_mtok`); wins over genai-prices.
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
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL
    """The API root when `base_url=` is not given."""
    base_url_env: ClassVar[str | None] = BASE_URL_ENV
    """The environment variable holding the API root."""
    api_key_envs: ClassVar[tuple[str, ...]] = API_KEY_ENVS
    """The environment variables the key is read from, in order."""
    api_key_header: ClassVar[str] = "x-goog-api-key"
    """The header the key is sent in (never the URL, so no logged URL holds it)."""
    api_key_prefix: ClassVar[str] = ""
    """The key goes in its header as it is."""
    answer_noun: ClassVar[str] = "GenerateContentResponse"
    """What a body should be, in error messages."""
    logger: ClassVar[logging.Logger] = logging.getLogger("neuron_provider_google")
    """Where requests and answers are logged (at DEBUG)."""
    output_modes: ClassVar[tuple[OutputMode, ...]] = ("native", "tool", "prompted")
    """Typed answers use `responseJsonSchema` on calls that offer no tools."""
    hosted_tools: ClassVar[frozenset[str]] = wire.HOSTED_TOOLS
    """Google Search (`web_search`), URL context (`web_fetch`) and code execution run on
    Google's servers, without limits: the API has no field for uses, domains or a
    location, so a hosted tool setting one is refused before the call. Code the model
    ran and its output stay in the history and go back on later calls. Search
    grounding's fee is in the cost at genai-prices' price: per grounded prompt on Gemini
    2.x, per search query on Gemini 3, every one counted (a call cannot know whether it
    fell in Google's free allowance). `image_generation` asks an image model for images
    beside the text (`responseModalities`, and `imageConfig` with the aspect ratio and
    size when set); they come back as `ImagePart`s, go back on later calls (with their
    thought signatures) so a later message can ask for an edit, and their tokens are
    priced at the model's output image price."""
    takes_thinking: ClassVar[bool] = True
    """`ProviderRequest.thinking` becomes `thinkingConfig`: a `thinkingLevel` on Gemini 3, a
    `thinkingBudget` before it (`False`: 0), with `includeThoughts` so the thoughts reach
    the turn; a `thinkingConfig` in `body_defaults` or `extra` wins."""
    takes_strict_tools: ClassVar[bool] = True
    """A call offering a strict tool keeps every function call to its declaration's schema:
    `toolConfig.functionCallingConfig.mode` is `VALIDATED` for an `auto` tool choice or
    none (text or a call, as `AUTO`), and `ANY` for `required` or a named tool, which
    already adheres; `none` stays `NONE`. A `functionCallingConfig` in `extra` wins, and
    one in `body_defaults` does when the turn sets no tool choice."""
    _pricer: Pricer
    takes_sampling: ClassVar[frozenset[str]] = frozenset(wire.SAMPLING_FIELDS)
    """Every sampling setting, as `generationConfig`'s `topP`, `topK`, `stopSequences`, `seed`,
    `presencePenalty` and `frequencyPenalty`; the same field in `body_defaults` or `extra`
    wins. More than 5 stop sequences (the API's limit), or a seed beyond 32 bits, is
    refused before the call (`InvalidRequestError`). A model whose `Model.topK` is empty
    does not allow `topK` (the API reference): the API answers for it."""

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
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            require_api_key=require_api_key,
            headers=headers,
            timeout=timeout,
            client=client,
        )
        self._body_defaults: dict[str, JsonValue] = dict(body_defaults or {})
        self._stream_by_default = stream
        self._include_thoughts = include_thoughts
        self._pricer = Pricer(parse_prices(prices), lookup=lookup_prices)
        self._urls: dict[tuple[str, bool], httpx.URL | str] = {}
        self._calls = itertools.count(1)

    def request_body(self, request: ProviderRequest) -> dict[str, JsonValue]:
        """The JSON body `complete` would send for `request` (override to add fields).

        Raises:
            InvalidRequestError: a message holds content the API cannot take, or the
                sampling setting holds a value beyond its limits (more than 5 stop sequences).
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

    # --- what the Gemini API does its own way ----------------------------------

    def _wants_stream(self, body: dict[str, JsonValue]) -> bool:
        return self._stream_by_default

    def _error_from_response(
        self, response: httpx.Response, context: ErrorContext
    ) -> ProviderError:
        return error_from_response(response, context)

    def _endpoint(self, model: str, *, stream: bool) -> httpx.URL | str:
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

    def _read_body(self, data: object, content: bytes, context: ErrorContext) -> answer.Completion:
        if isinstance(data, list) and data and all(isinstance(chunk, dict) for chunk in data):
            # `:streamGenerateContent` without `alt=sse` (a proxy dropped it): an array of chunks.
            reader = self._event_reader()
            for chunk in data:
                self._feed(reader, chunk, context)
            return self._finish_stream(reader, context)
        if isinstance(data, dict) and "error" in data and "candidates" not in data:
            api_error = api_error_from_json(data)
            if api_error is not None:
                raise error_from_status(
                    status_of(api_error), api_error, headers=None, context=context
                )
        return self._parsed(data, content, context)

    def _cost(self, completion: answer.Completion, *, requested_model: str) -> Money | None:
        # Audio, image and video tokens are priced from the metadata that counts them,
        # Google Search grounding from the units the answer is billed for.
        return self._pricer.cost(
            completion.usage,
            model=completion.model,
            requested_model=requested_model,
            media_usage=completion.media_usage,
            web_searches=completion.web_searches,
        )

    def _unpriced_searches(self, completion: answer.Completion, *, requested_model: str) -> int:
        return self._pricer.unpriced_searches(
            model=completion.model,
            requested_model=requested_model,
            web_searches=completion.web_searches,
        )

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

    # --- streaming ----------------------------------------------------------------

    def _event_reader(self) -> ChunkReader:
        return ChunkReader(fallback_salt=self._salt())

    async def _deltas(
        self, response: httpx.Response, reader: ChunkReader, context: ErrorContext
    ) -> AsyncGenerator[ProviderDelta, None]:
        try:
            async for line in body_lines(self._chunks(response, context)):
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
            raise self._cut_off(context, reader.events, "finishReason")
        return self._parsed(reader.body(), b"", context)

    def _stream_error(self, exc: StreamError, context: ErrorContext) -> ProviderError:
        api_error = exc.api_error
        return error_from_status(status_of(api_error), api_error, headers=None, context=context)
