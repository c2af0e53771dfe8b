"""`OpenAIResponsesProvider`: the OpenAI Responses API (`POST /v1/responses`)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
)
from contextlib import AsyncExitStack
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from typing import Any, ClassVar, Final

import httpx
from moneyed import Money
from pydantic import JsonValue

from neuron_turn.loop.events import ProviderDelta
from neuron_turn.loop.hosted_tools import ImageGeneration
from neuron_turn.loop.http_errors import redact, utf8
from neuron_turn.loop.http_provider import ErrorContext, mapped_transport_errors
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse
from neuron_turn.loop.provider_errors import (
    InvalidRequestError,
    ProviderAuthenticationError,
    ProviderConnectionError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from neuron_turn.loop.provider_stream import ProviderStreamEvent
from neuron_turn.loop.sampling import SamplingSetting

from . import _responses_wire as wire
from ._base import OpenAIBase
from ._errors import api_error_from_json, error_from_status, status_for_code
from ._pricing import PriceTable, image_fee
from ._responses_stream import ResponseEventReader
from ._wire import Completion, UnsupportedContentError, is_reasoning_model

__all__ = ["BackgroundPolling", "OpenAIResponsesProvider"]

_RESOLVED_QUALITIES = frozenset({"low", "medium", "high"})


@dataclass(frozen=True, slots=True)
class BackgroundPolling:
    """How a background response (`background=`) is waited for, resumed and given up on.

    Why a setting: o3-pro, deep research and gpt-5-pro take minutes per answer, past any
    sane HTTP read timeout; in background mode the call answers at once and the answer is
    asked for again until it is done (OpenAI's "Background mode" guide). Each value is
    checked when made; a bad one raises `ValueError` naming it.

    Args:
        first: Seconds before the first poll; each pause after is twice the one before.
        most: The longest pause between polls, in seconds (at least `first`).
        timeout: Seconds to wait for a polled answer in all (a poll that hangs included)
            before the call fails (`ProviderTimeoutError`) and the response is cancelled;
            None: no limit of its own. A stream has none of its own either (one whose
            resume was refused, polled instead, has it from then on): the turn's
            `max_duration` and cancellation bound both.
        reconnects: How many times in a row a dropped stream is resumed (each after a
            pause, as between polls; a resume answered 429 or 5xx counts as one), or a
            poll that failed to connect (or was answered 429 or 5xx) is made again, before
            the call fails; a resumed stream that brought a new event, or a poll that got an
            answer, starts the count again.
        cancel_timeout: Seconds the best-effort cancel of a response given up on may take.
    """

    first: float = 1.0
    most: float = 10.0
    timeout: float | None = None
    reconnects: int = 3
    cancel_timeout: float = 5.0

    def __post_init__(self) -> None:
        _check_seconds("first", self.first)
        _check_seconds("most", self.most)
        if self.most < self.first:
            raise ValueError(
                f"BackgroundPolling.most must be at least first ({self.first!r}), got {self.most!r}"
            )
        if self.timeout is not None:
            _check_seconds("timeout", self.timeout)
        count = self.reconnects
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError(
                f"BackgroundPolling.reconnects must be an int of 0 or more, got {count!r}"
            )
        _check_seconds("cancel_timeout", self.cancel_timeout)

    @classmethod
    def of(cls, value: object) -> BackgroundPolling | None:
        """The setting `background=` asks for: True (the defaults), a mapping of fields, or one.

        A mapping is what `--option background={...}` and JSON configuration give.
        """
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            names = {field.name for field in fields(cls)}
            unknown = sorted(str(key) for key in value if key not in names)
            if unknown:
                raise ValueError(
                    f"background: unknown BackgroundPolling field(s) {', '.join(unknown)}; "
                    f"known: {', '.join(sorted(names))}"
                )
            return cls(**{str(key): item for key, item in value.items()})
        raise ValueError(
            f"background must be True, False, a BackgroundPolling or a mapping of its fields, "
            f"got {value!r}"
        )


def _check_seconds(name: str, value: object) -> None:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(
            f"BackgroundPolling.{name} must be a finite number of seconds above 0, got {value!r}"
        )


_CANCEL_LOG: Final = "%s: could not cancel background response %s (it may run on): %s"
_CREATE_CANCEL_LOG: Final = (
    "%s: a call cancelled while its background response was created was not named within "
    "cancel_timeout; that response may run on (see the dashboard's logs)"
)


class OpenAIResponsesProvider(OpenAIBase[ResponseEventReader]):
    """A `neuron_turn.Provider` for `POST {base_url}/responses`, OpenAI's newer API.

    The one the OpenAI Agents SDK uses by default (pydantic-ai's
    `openai-responses:`). Reached as `"openai-responses:<model>"`.

    Stateless: every call sends the whole conversation (`input`) with
    `store: false`, as the loop holds the history itself; nothing is kept on
    OpenAI's side, `previous_response_id` is never used, and a turn can move
    between processes or providers. A reasoning model's reasoning survives
    a tool loop all the same: its `reasoning` items come back encrypted
    (`include: ["reasoning.encrypted_content"]`) and are sent back in place.

    Key handling, `base_url`, pricing and errors are those of `OpenAIProvider`
    (same key, same environment variables, same genai-prices data).

    Beside messages and tools it maps typed answers (`output_modes`), hosted
    tools, thinking, sampling settings and strict tools (`takes_strict_tools`);
    each attribute below says how.

    Args:
        model: The model used when a request names none.
        api_key: The API key; default: the `OPENAI_API_KEY` environment
            variable, read at the first call.
        base_url: The API root, up to and excluding `/responses`. Default:
            `OPENAI_BASE_URL` when set and not empty, else OpenAI's.
        require_api_key: Fail the first call when no key is found. Default:
            true only for OpenAI's own URL.
        headers: Extra headers on every request.
        timeout: Seconds or an `httpx.Timeout`. Default: `DEFAULT_TIMEOUT` for
            the provider's own client, the injected client's own otherwise.
        client: An `httpx.AsyncClient` to use; the caller keeps ownership.
            Default: one client built on first use and reused for every call.
        prices: `{model: {"input_mtok": ..., "output_mtok": ...,
            "cache_read_mtok": ...}}` in USD per million tokens, and
            `"web_searches_kcount"` in USD per 1,000 web searches (without it
            genai-prices' fee for the model, when prices are looked up; searches
            no price covers are left out of the cost, and the turn warns of them
            once per model); wins over genai-prices.
        lookup_prices: Price unlisted models from genai-prices' data. Default:
            true for OpenAI's URL (unknown model: cost None), false for a
            custom `base_url` (unlisted model: 0 USD).
        body_defaults: Request body fields sent on every call (e.g.
            `{"reasoning": {"effort": "low", "summary": "auto"}}`,
            `{"store": True}`, `{"truncation": "auto"}`); built fields and
            then `request.extra` override them.
        stream: Ask for a server-sent-event stream and assemble it.
        send_metadata: Send `request.extra["metadata"]` as the API's `metadata`.
        encrypted_reasoning: Ask for reasoning items' encrypted content so
            they can be sent back. Default: for reasoning models by name (o1,
            o3, o4, gpt-5 families), as other models refuse it. Only sent
            with `store: false`.
        background: Run each call in OpenAI's background mode, for models that take
            minutes (o3-pro, deep research, gpt-5-pro): `True`, a `BackgroundPolling` or a
            mapping of its fields. Each call is sent with `background: true` and
            `store: true` (background mode keeps responses; an explicit `store: false` in
            `body_defaults` is refused), answers at once, and is polled
            (`GET /responses/{id}`) with a growing pause until it is done; streamed, a
            dropped stream is resumed after the last event read
            (`?stream=true&starting_after=N`), and polled to its end when the API refuses
            the resume (a 4xx but 401, 403 and 429). A call given up on (cancelled, past the
            turn's `max_duration` or the setting's `timeout`, or its connection lost) is
            cancelled on OpenAI's side (`POST /responses/{id}/cancel`, best effort), so
            it stops being billed. A response the API answers as background (a
            `background` in `body_defaults` or `extra`) is waited for the same way, with
            the default setting.
    """

    name: ClassVar[str] = wire.PROVIDER
    """The registered provider name; used in error messages and `ProviderError.provider`."""
    endpoint: ClassVar[str] = "/responses"
    """The path under `base_url` every call is posted to."""
    answer_noun: ClassVar[str] = "Responses API response"
    """What a body should be, in error messages."""
    output_modes: ClassVar[tuple[OutputMode, ...]] = ("native", "tool", "prompted")
    """Typed answers use `text.format: json_schema` unless told otherwise."""
    hosted_tools: ClassVar[frozenset[str]] = wire.HOSTED_TOOLS
    """Web search (`web_search`: allowed domains, location, `max_uses` as `max_tool_calls`),
    code execution (`code_interpreter` in an automatic container) and remote MCP servers
    (`mcp`: each `HostedMCP` by its label, with its allowed tools and its token, and
    `require_approval: "never"` unless the caller asked otherwise) run on
    OpenAI's servers. Their calls' items are not sent back (`store` is off); the answer's
    text follows from them. Each `mcp_call` is recorded as a `HostedToolCall("mcp", {"server",
    "tool", "arguments", "error"})`, its output left out; an MCP server's token is hidden
    from the call's logs, errors and answer as the API key is. The web search fee is in
    the call's cost (so in a turn's `max_cost`): a `prices=` entry's `web_searches_kcount`
    or else genai-prices' price per 1,000 searches for each `web_search_call` item (a
    model neither prices: its searches are left out, and the turn warns). OpenAI
    bills `search` actions; every item is counted, pages opened and searched within
    (`open_page`, `find_in_page`, whose billing OpenAI's guide does not state) too, so a
    budget errs high, not low. The code interpreter's fee per container is not in the
    cost: it is billed when a container is created, and the answer does not say whether
    its call created one.

    `ImageGeneration` is the `image_generation` tool (its settings as the tool's own,
    `image_generation_takes`): each `image_generation_call` is an `ImagePart` of the answer in
    its place (whole in a stream, when its call completes; partial images are not asked
    for), recorded as a `HostedToolCall("image_generation", {"media_type", "bytes",
    "revised_prompt", "quality", "size", "status", "error"})`, never its bytes. A call that
    made no image (failed, moderated) is a note in its place; a `result` that is not base64
    fails the call (`ProviderResponseError`). Images go back to the API by their call's id
    on a stored call (`store: true` in `body_defaults`); with `store: false` (the default)
    the API has nothing to look the id up in, so each goes back as a note naming it. The
    image fee is in the cost at OpenAI's price per image (`_pricing.IMAGE_PRICES`) when
    the image model (`ImageGeneration.model`), the quality and the size are known; an
    image none prices is left out of the cost and logged as a warning."""
    image_generation_takes: ClassVar[Mapping[str, frozenset[str] | None]] = wire.IMAGE_TAKES
    """The `ImageGeneration` settings the image tool takes: all but `image_size`, and of the
    aspect ratios 1:1, 3:2 and 2:3 (its sizes); a turn asking for others is refused when
    made."""
    approves_hosted_calls: ClassVar[bool] = True
    """A `HostedMCP` with `require_approval` is sent with OpenAI's `require_approval`; each
    `mcp_approval_request` becomes a call named `mcp` the turn pauses on
    (`neuron_turn.loop.hosted_approvals`), sent back as that request with the decision
    after it (`mcp_approval_response`: approved, or not with the reason). The `mcp_call`
    of an approved call stays in the answer (a `RawPart`) and goes back on later calls,
    so the API sees the request answered and the call done."""
    takes_thinking: ClassVar[bool] = True
    """`ProviderRequest.thinking` becomes `reasoning: {"effort": ..., "summary": "auto"}`
    (`True`: `"medium"`, `False`: `"none"`), so the reasoning summary reaches the turn
    as `ThinkingPart`s; a `reasoning` in `body_defaults` or `extra` wins."""
    takes_sampling: ClassVar[frozenset[SamplingSetting]] = wire.SAMPLING.takes
    """`ProviderRequest.sampling`'s `top_p` becomes the body's `top_p` (a `top_p` in
    `body_defaults` or `extra` wins); the Responses API has no `top_k`, `stop`, `seed`
    nor penalties, so a turn setting one is refused when made."""
    takes_strict_tools: ClassVar[bool] = True
    """A strict tool (`ToolSchema.strict`) is sent with `"strict": true` and its schema in
    OpenAI's strict subset (`neuron_tool.strict_form`), the nulls the model then sends for
    optional parameters dropped from its calls (`StrictForm.restore`); any other goes with
    `"strict": false`, as before. A schema with no strict form is refused before the call,
    naming the tool and where."""

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
        encrypted_reasoning: bool | None = None,
        background: bool | BackgroundPolling | Mapping[str, object] | None = None,
    ) -> None:
        polling = BackgroundPolling.of(background)
        if polling is not None and body_defaults is not None:
            if body_defaults.get("store") is False:
                raise ValueError(
                    f"{wire.PROVIDER}: background= needs stored responses, and "
                    "body_defaults sets store: false; drop that store (background mode "
                    "keeps the response on OpenAI's side while it is polled)"
                )
            if body_defaults.get("background") is False:
                raise ValueError(
                    f"{wire.PROVIDER}: background= and body_defaults' background: false "
                    "contradict each other; keep one"
                )
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            require_api_key=require_api_key,
            headers=headers,
            timeout=timeout,
            client=client,
            prices=prices,
            lookup_prices=lookup_prices,
            body_defaults=body_defaults,
            stream=stream,
            send_metadata=send_metadata,
        )
        self._encrypted_reasoning = encrypted_reasoning
        self._background = polling
        if polling is not None:
            self._body_defaults["store"] = True
            self._body_defaults["background"] = True
        # Replaced in tests, so no test waits out a real pause.
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self._clock: Callable[[], float] = time.monotonic
        self._cancels: set[asyncio.Task[None]] = set()

    @property
    def background(self) -> BackgroundPolling | None:
        """How background responses are waited for; None: calls are not made in the background."""
        return self._background

    def request_body(self, request: ProviderRequest) -> dict[str, JsonValue]:
        """The JSON body `complete` would send for `request` (override to add fields).

        Raises:
            InvalidRequestError: a message holds content the API cannot take, a
                sampling setting the API does not take, or a strict tool's schema has
                no strict form.
        """
        model = request.model or self.model
        encrypted = self._encrypted_reasoning
        try:
            body = wire.request_body(
                request,
                model=model,
                defaults=self._body_defaults,
                send_metadata=self._send_metadata,
                encrypted_reasoning=is_reasoning_model(model) if encrypted is None else encrypted,
            )
        except UnsupportedContentError as exc:
            raise InvalidRequestError(f"{self.name}: {exc}", provider=self.name) from exc
        if body.get("background") is True and body.get("store") is False:
            raise InvalidRequestError(
                f"{self.name}: the request asks for background: true and store: false; "
                "background mode needs stored responses (the API refuses it unstored): "
                "drop the store: false from request.extra",
                provider=self.name,
            )
        return body

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Make one model call (see `OpenAIBase.complete`); the images it made priced."""
        response = await super().complete(request)
        return self._with_image_fees(response, request)

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        """Make one model call as a stream (see `OpenAIBase.stream`); the images it made priced."""
        if _image_tool(request) is None:
            return super().stream(request)
        return self._priced_stream(request)

    async def _priced_stream(self, request: ProviderRequest) -> AsyncIterator[ProviderStreamEvent]:
        events = super().stream(request)
        try:
            async for event in events:
                if isinstance(event, ProviderResponse):
                    event = self._with_image_fees(event, request)
                yield event
        finally:
            # Closed now, not when collected: a caller closing early closes the connection.
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    def _with_image_fees(
        self, response: ProviderResponse, request: ProviderRequest
    ) -> ProviderResponse:
        """`response` with its images' fees in its cost, and how many images no price covers.

        Why here and not in `_cost`: the image model and the asked quality and size are
        the request's (`ImageGeneration`), which the answer's items do not repeat. A
        self-hosted server's calls (prices not looked up, no `prices=` entry for the model)
        cost nothing, images included; behind a gateway with `prices=`, as for searches,
        an image is priced from OpenAI's table or counted unpriced, never free.
        """
        tool = _image_tool(request)
        cost = response.cost
        if tool is None or cost is None or self._self_hosted(response.model, request.model):
            return response
        fees, unpriced = Decimal(0), 0
        for call in response.hosted_calls:
            made = call.input if call.name == "image_generation" else None
            if not isinstance(made, dict) or made.get("bytes") is None:
                continue
            quality = made.get("quality")
            quality = quality if quality in _RESOLVED_QUALITIES else tool.quality
            size = made.get("size")
            if not isinstance(size, str) and tool.aspect_ratio is not None:
                size = wire.IMAGE_SIZES.get(tool.aspect_ratio)
            fee = image_fee(
                tool.model,
                quality if isinstance(quality, str) else None,
                size if isinstance(size, str) else None,
            )
            if fee is None:
                unpriced += 1
            else:
                fees += fee
        if not fees and not unpriced:
            return response
        # Images none prices are the loop's to warn of (`unpriced_images`), never free.
        return replace(response, cost=cost + Money(fees, "USD"), unpriced_images=unpriced)

    def _response(self, completion: Completion, *, requested_model: str) -> ProviderResponse:
        """The call's response, with the code runs whose container fee its cost leaves out.

        Read from the answer alone, streamed or not. A self-hosted server's calls
        (prices not looked up, none given for the model) cost nothing, code runs
        included, as its images do; behind a gateway with `prices=` they are warned of.
        """
        response = super()._response(completion, requested_model=requested_model)
        runs = wire.code_executions(response.hosted_calls) if response.hosted_calls else 0
        if not runs or response.cost is None or self._self_hosted(response.model, requested_model):
            return response
        # Container time is no answer's to say: the loop warns of it, never counts it free.
        return replace(response, unpriced_code_executions=runs)

    def _self_hosted(self, model: str, requested_model: str) -> bool:
        """Whether the server is one of the caller's own: no lookup and no price given for it."""
        pricer = self._pricer
        return not pricer.lookup and not (
            model in pricer.overrides or requested_model in pricer.overrides
        )

    def _read_body(self, data: object, content: bytes, context: ErrorContext) -> Completion:
        if isinstance(data, dict) and data.get("error") and "output" not in data:
            raise self._error_in_200(data, content, context)
        pending = _pending_id(data)
        # Only a background response is polled: a foreground one still being made is a
        # compatible server's mistake, refused below rather than asked about for ever.
        if pending is not None and (self._background is not None or _in_background(data)):
            raise _Pending(self.name, *pending)
        try:
            return wire.parse_response(data, fallback_model=context.model)
        except wire.FailedResponseError as exc:
            raise self._failed(exc.error, context) from None
        except wire.CancelledResponseError:
            raise self._cancelled(data, context) from None
        except wire.MalformedResponseError as exc:
            raise self._bad_body(f"a {self.answer_noun} ({exc})", content, context) from None

    def _event_reader(self) -> ResponseEventReader:
        return ResponseEventReader()

    def _finish_stream(self, reader: ResponseEventReader, context: ErrorContext) -> Completion:
        if reader.polled is not None:
            return reader.polled
        if reader.events == 0:
            raise self._bad_body("a stream of Responses API events", b"", context)
        if not reader.complete:
            raise self._cut_off(context, reader.events, "response.completed event")
        try:
            return wire.parse_response(reader.body(), fallback_model=context.model)
        except wire.FailedResponseError as exc:
            raise self._failed(exc.error, context) from None
        except wire.CancelledResponseError:
            raise self._cancelled(reader.body(), context) from None
        except wire.MalformedResponseError as exc:
            detail = f"a {self.answer_noun} in the stream's last event ({exc})"
            raise self._bad_body(detail, b"", context) from None

    def _failed(self, error: object, context: ErrorContext) -> ProviderError:
        """A response whose status is `failed`: its error code says which error it is."""
        api_error = api_error_from_json({"error": error})
        code = api_error.code if api_error is not None else None
        return error_from_status(status_for_code(code), api_error, headers=None, context=context)

    def _cancelled(self, data: object, context: ErrorContext) -> ProviderError:
        """A response whose status is `cancelled`: stopped on OpenAI's side, not for a retry."""
        response_id = data.get("id") if isinstance(data, dict) else None
        named = f" {response_id}" if isinstance(response_id, str) else ""
        return ProviderResponseError(
            redact(
                f"{self.name}: the response{named} for model {context.model!r} was cancelled "
                "before it finished (a cancel request for it reached OpenAI, not from this "
                "call); its partial output is discarded",
                context.secrets,
            ),
            provider=self.name,
            status_code=200,
        )

    # --- background mode -----------------------------------------------------------

    def _polling(self) -> BackgroundPolling:
        return self._background or _DEFAULT_POLLING

    def _response_url(self, response_id: str, suffix: str = "") -> str:
        # The id was checked against wire.RESPONSE_ID: nothing in it can leave this path.
        return f"{self._url}/{response_id}{suffix}"

    async def _post(
        self, model: str, payload: bytes, headers: dict[str, str], context: ErrorContext
    ) -> Completion:
        """Post the call; a background response it answers with is polled until it is done.

        In background mode, a caller cancelled while the response is being created
        waits (within `cancel_timeout`) for the API to name it, and cancels it:
        made in the background, it would run on, and be billed, without anyone
        waiting for it.
        """
        try:
            if self._background is None:
                return await super()._post(model, payload, headers, context)
            return await self._created(super()._post(model, payload, headers, context), context)
        except _Pending as pending:
            return await self._poll(pending.response_id, headers, context)

    async def _created(
        self, posting: Coroutine[Any, Any, Completion], context: ErrorContext
    ) -> Completion:
        """Await a background call's creation; cancelled meanwhile, cancel what it made."""
        creating = asyncio.ensure_future(posting)
        try:
            return await asyncio.shield(creating)
        except asyncio.CancelledError:
            if not creating.done():
                await self._cancel_created(creating, context)
            raise

    async def _cancel_created(
        self, creating: asyncio.Future[Completion], context: ErrorContext
    ) -> None:
        """Wait for a background response being created to be named, then cancel it.

        Best effort, as `_cancel_remote`: within `cancel_timeout`, logged when it
        cannot be; a second cancellation of the caller stops the wait.
        """
        try:
            async with asyncio.timeout(self._polling().cancel_timeout):
                await creating
        except _Pending as pending:
            await self._cancel_remote(pending.response_id, context)
        except TimeoutError:
            self.logger.warning(_CREATE_CANCEL_LOG, self.name)
        except ProviderError:
            pass  # refused, or answered whole: nothing runs on OpenAI's side
        except Exception as exc:  # never in the way of the caller's cancellation
            detail = redact(f"{type(exc).__name__}: {exc}", context.secrets)
            self.logger.warning(_CANCEL_LOG, self.name, "being created", detail)
        finally:
            creating.cancel()  # done already, or given up on

    async def _poll(
        self, response_id: str, headers: dict[str, str], context: ErrorContext
    ) -> Completion:
        """Ask for background response `response_id` until it is done; its answer.

        Pauses grow from `first` to `most`. Leaving while it may still run (cancelled,
        timed out, the connection lost for good) cancels it on OpenAI's side first.

        Raises:
            ProviderError: as a call does, by the done response's status (`failed` by its
                code, `cancelled` as `ProviderResponseError`); `ProviderTimeoutError` past
                the setting's `timeout`; the last poll's error once `reconnects` polls in
                a row failed with a retryable one.
        """
        settings = self._polling()
        self._http_client()  # a closed injected client fails now, not after the first pause
        url = self._response_url(response_id)
        limit = None if settings.timeout is None else self._clock() + settings.timeout
        pause, failures, running = settings.first, 0, True
        try:
            while True:
                if limit is not None:
                    left = limit - self._clock()
                    if left <= 0:
                        raise self._timed_out(response_id, settings, context)
                    pause = min(pause, left)
                await self._sleep(pause)
                pause = min(pause * 2, settings.most)
                # A poll that hangs is cut at the timeout, not at the HTTP one (one at the
                # limit still gets `first` seconds: the answer may be there just in time).
                bound = None if limit is None else max(limit - self._clock(), settings.first)
                try:
                    async with asyncio.timeout(bound) as scope:
                        with mapped_transport_errors(context):
                            answer = await self._send("GET", url, context, headers=headers)
                    if answer.status_code >= 400:
                        raise self._error_from_response(answer, context)
                except ProviderError as exc:
                    if not exc.retryable:
                        running = False  # refused (gone, not allowed): nothing to cancel
                        raise
                    failures += 1
                    if failures > settings.reconnects:
                        raise
                    continue
                except TimeoutError:
                    if not scope.expired():
                        raise
                    raise self._timed_out(response_id, settings, context) from None
                failures = 0
                try:
                    return self._parse_json(answer.content, context)
                except _Pending:
                    continue
                except ProviderError:
                    running = False  # the response is done, and said how
                    raise
        except BaseException:
            if running:
                await self._cancel_remote(response_id, context)
            raise

    def _timed_out(
        self, response_id: str, settings: BackgroundPolling, context: ErrorContext
    ) -> ProviderError:
        return ProviderTimeoutError(
            f"{self.name}: background response {response_id} for model {context.model!r} "
            f"was not done after {settings.timeout:g}s (BackgroundPolling.timeout); it was "
            "cancelled",
            provider=self.name,
        )

    async def _deltas(
        self, response: httpx.Response, reader: ResponseEventReader, context: ErrorContext
    ) -> AsyncGenerator[ProviderDelta, None]:
        """The stream's deltas; a background stream that drops is resumed where it stopped.

        A resumed stream (`GET /responses/{id}?stream=true&starting_after=N`, N the last
        event read) hands on only events after N. A resume the API refuses (a 4xx other
        than 401, 403 and 429: the stream is no longer kept, or never was) is given up for
        polling the response as a non-streamed background call is (`_poll`, its bounds
        counted from there): no delta after the drop is handed on, and the polled answer
        stands whole for the stream's end. Leaving a background stream before its end
        (closed early, cancelled, resumes used up) cancels the response on OpenAI's side,
        as a background response runs on without its connection.
        """
        settings = self._polling()
        source: httpx.Response | None = response
        pause, failures, said = settings.first, 0, False
        try:
            async with AsyncExitStack() as stack:
                while True:
                    if source is not None:
                        before = reader.events
                        try:
                            async for delta in super()._deltas(source, reader, context):
                                yield delta
                        except httpx.TransportError:
                            if not _resumable(reader):
                                raise
                        except ProviderError:
                            said = True  # the stream told how the response ended
                            raise
                        else:
                            if reader.complete or not _resumable(reader):
                                return
                        if reader.events > before:
                            failures, pause = 0, settings.first
                    failures += 1
                    if failures > settings.reconnects:
                        raise self._lost(reader, settings, context)
                    await self._sleep(pause)
                    pause = min(pause * 2, settings.most)
                    try:
                        source = await self._resumed(stack, reader, context)
                    except _ResumeRefused as refusal:
                        # From here `_poll` owns the response: it cancels it when it leaves
                        # early, and not when it was refused or is done.
                        said = True
                        self.logger.info(_POLL_INSTEAD_LOG, reader.response_id, refusal.error)
                        reader.polled = await self._poll(
                            reader.response_id, self._request_headers(), context
                        )
                        return
                    except ProviderError:
                        said = True  # refused as not allowed: a cancel would be refused too
                        raise
        finally:
            if not said and not reader.complete and _resumable(reader):
                await self._cancel_remote(reader.response_id, context)

    async def _resumed(
        self, stack: AsyncExitStack, reader: ResponseEventReader, context: ErrorContext
    ) -> httpx.Response | None:
        """The stream taken up after the last event `reader` read; None when it did not connect.

        A 429 or 5xx is a resume that did not get through (None), as a failed connection is:
        tried again within `BackgroundPolling.reconnects`.

        Raises:
            ProviderAuthenticationError: 401 or 403, the response is not this key's to see.
            _ResumeRefused: any other refusal (an HTTP error status): the response may be
                polled instead.
        """
        reader.skip_through = reader.last_sequence
        params = {"stream": "true", "starting_after": str(reader.last_sequence)}
        try:
            resumed = await stack.enter_async_context(
                self._http_client().stream(
                    "GET",
                    self._response_url(reader.response_id),
                    params=params,
                    headers=self._request_headers(),
                    timeout=self._request_timeout(),
                )
            )
        except httpx.TransportError:
            return None
        if resumed.status_code >= 400:
            error = self._error_from_response(await self._bounded(resumed, context), context)
            if error.retryable:
                return None
            if isinstance(error, ProviderAuthenticationError):
                raise error
            raise _ResumeRefused(error)
        return utf8(resumed)

    def _lost(
        self, reader: ResponseEventReader, settings: BackgroundPolling, context: ErrorContext
    ) -> ProviderError:
        return ProviderConnectionError(
            f"{self.name}: the stream of background response {reader.response_id} for model "
            f"{context.model!r} dropped and could not be resumed "
            f"({settings.reconnects} attempt(s) in a row, BackgroundPolling.reconnects) "
            f"after {reader.events} event(s); it was cancelled and the partial answer is "
            "discarded",
            provider=self.name,
        )

    async def _cancel_remote(self, response_id: str, context: ErrorContext) -> None:
        """Ask OpenAI to cancel `response_id`, best effort: bounded in time, failures logged.

        Shielded: a second cancellation of the caller leaves the request to finish (within
        `cancel_timeout`) rather than cut it off; the caller's own exception always goes on.
        """
        task = asyncio.ensure_future(self._send_cancel(response_id, context))
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)
        await asyncio.shield(task)

    async def _send_cancel(self, response_id: str, context: ErrorContext) -> None:
        url = self._response_url(response_id, "/cancel")
        try:
            async with asyncio.timeout(self._polling().cancel_timeout):
                answer = await self._send("POST", url, context, headers=self._request_headers())
            if answer.status_code >= 400:
                error = self._error_from_response(answer, context)
                self.logger.warning(_CANCEL_LOG, self.name, response_id, error)
            else:
                self.logger.debug("cancelled background response %s", response_id)
        except Exception as exc:  # best effort: logged, never in the way of why we left
            detail = redact(f"{type(exc).__name__}: {exc}", context.secrets)
            self.logger.warning(_CANCEL_LOG, self.name, response_id, detail)


_DEFAULT_POLLING: Final = BackgroundPolling()
_POLL_INSTEAD_LOG: Final = (
    "resuming the stream of background response %s was refused (%s); polling it instead"
)


class _ResumeRefused(Exception):
    """The API refused to take a dropped stream up again; the response may still be polled.

    Never leaves the provider: `_deltas` polls instead, and the poll's own errors are the
    call's.
    """

    def __init__(self, error: ProviderError) -> None:
        super().__init__(f"resuming the stream was refused: {error}")
        self.error = error


class _Pending(ProviderResponseError):
    """A background response not done yet (`queued`, `in_progress`): polled, not returned.

    A `ProviderResponseError`, so a server that answers a streamed call so fails it clearly.
    """

    def __init__(self, provider: str, response_id: str, status: str) -> None:
        super().__init__(
            f"{provider}: expected a finished response, got background response "
            f"{response_id} still {status}",
            provider=provider,
            status_code=200,
        )
        self.response_id = response_id


def _pending_id(data: object) -> tuple[str, str] | None:
    """The id and status of a response still being made, when it has a usable id."""
    if not isinstance(data, dict):
        return None
    status, response_id = data.get("status"), data.get("id")
    if not isinstance(status, str) or status not in wire.UNFINISHED:
        return None
    if not isinstance(response_id, str):
        return None
    return (response_id, str(status)) if wire.RESPONSE_ID.fullmatch(response_id) else None


def _in_background(data: object) -> bool:
    """Whether the response object `data` says it runs in the background."""
    return isinstance(data, dict) and data.get("background") is True


def _resumable(reader: ResponseEventReader) -> bool:
    """Whether the stream `reader` reads can be taken up again: a background one, numbered."""
    return reader.background and bool(reader.response_id) and reader.last_sequence is not None


def _image_tool(request: ProviderRequest) -> ImageGeneration | None:
    """The request's `ImageGeneration`, when it offers one."""
    for tool in request.hosted_tools:
        if isinstance(tool, ImageGeneration):
            return tool
    return None
