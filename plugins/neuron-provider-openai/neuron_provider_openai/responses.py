"""`OpenAIResponsesProvider`: the OpenAI Responses API (`POST /v1/responses`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import ClassVar

import httpx
from moneyed import Money
from pydantic import JsonValue

from neuron_turn.loop.hosted_tools import ImageGeneration
from neuron_turn.loop.http_provider import ErrorContext
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse
from neuron_turn.loop.provider_errors import InvalidRequestError, ProviderError
from neuron_turn.loop.provider_stream import ProviderStreamEvent
from neuron_turn.loop.sampling import SamplingSetting

from . import _responses_wire as wire
from ._base import OpenAIBase
from ._errors import api_error_from_json, error_from_status, status_for_code
from ._pricing import PriceTable, image_fee
from ._responses_stream import ResponseEventReader
from ._wire import Completion, UnsupportedContentError, is_reasoning_model

__all__ = ["OpenAIResponsesProvider"]

_RESOLVED_QUALITIES = frozenset({"low", "medium", "high"})


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
    ) -> None:
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
            return wire.request_body(
                request,
                model=model,
                defaults=self._body_defaults,
                send_metadata=self._send_metadata,
                encrypted_reasoning=is_reasoning_model(model) if encrypted is None else encrypted,
            )
        except UnsupportedContentError as exc:
            raise InvalidRequestError(f"{self.name}: {exc}", provider=self.name) from exc

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
        (prices not looked up) cost nothing, code runs included, as its images do.
        """
        response = super()._response(completion, requested_model=requested_model)
        runs = wire.code_executions(response.hosted_calls) if response.hosted_calls else 0
        if not runs or response.cost is None or not self._pricer.lookup:
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
        try:
            return wire.parse_response(data, fallback_model=context.model)
        except wire.FailedResponseError as exc:
            raise self._failed(exc.error, context) from None
        except wire.MalformedResponseError as exc:
            raise self._bad_body(f"a {self.answer_noun} ({exc})", content, context) from None

    def _event_reader(self) -> ResponseEventReader:
        return ResponseEventReader()

    def _finish_stream(self, reader: ResponseEventReader, context: ErrorContext) -> Completion:
        if reader.events == 0:
            raise self._bad_body("a stream of Responses API events", b"", context)
        if not reader.complete:
            raise self._cut_off(context, reader.events, "response.completed event")
        try:
            return wire.parse_response(reader.body(), fallback_model=context.model)
        except wire.FailedResponseError as exc:
            raise self._failed(exc.error, context) from None
        except wire.MalformedResponseError as exc:
            detail = f"a {self.answer_noun} in the stream's last event ({exc})"
            raise self._bad_body(detail, b"", context) from None

    def _failed(self, error: object, context: ErrorContext) -> ProviderError:
        """A response whose status is `failed`: its error code says which error it is."""
        api_error = api_error_from_json({"error": error})
        code = api_error.code if api_error is not None else None
        return error_from_status(status_for_code(code), api_error, headers=None, context=context)


def _image_tool(request: ProviderRequest) -> ImageGeneration | None:
    """The request's `ImageGeneration`, when it offers one."""
    for tool in request.hosted_tools:
        if isinstance(tool, ImageGeneration):
            return tool
    return None
