"""`OpenAIProvider`: the OpenAI Chat Completions API, and any server that speaks it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import httpx
from pydantic import JsonValue

from neuron_turn.loop.http_provider import ErrorContext
from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.provider import ProviderRequest
from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.sampling import SamplingSetting

from . import _wire
from ._base import API_KEY_ENV, BASE_URL_ENV, DEFAULT_BASE_URL, DEFAULT_TIMEOUT, OpenAIBase
from ._pricing import PriceTable
from ._stream import StreamAccumulator
from ._wire import Completion, SystemRole
from .presets import OPENAI_SAMPLING, PresetSampling, PresetThinking

__all__ = ["API_KEY_ENV", "BASE_URL_ENV", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "OpenAIProvider"]


class OpenAIProvider(OpenAIBase[StreamAccumulator]):
    """A `neuron_turn.Provider` for `POST {base_url}/chat/completions`.

    Works with OpenAI and with OpenAI-compatible servers (vLLM, llama.cpp's
    server, Ollama's `/v1`, OpenRouter): give `base_url`. With a custom
    `base_url` the key is optional and calls cost 0 USD unless `prices=` or
    `lookup_prices=True` says otherwise.

    Beside messages and tools it maps typed answers (`output_modes`), thinking,
    sampling settings and strict tools (`takes_strict_tools`); each attribute
    below says how.

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

    output_modes: ClassVar[tuple[OutputMode, ...]] = ("native", "tool", "prompted")
    """Typed answers use `response_format: json_schema` unless told otherwise (a compatible
    server without it: pass `output_mode="tool"` or `"prompted"` in `NeuronTurnConfig`)."""
    takes_thinking: ClassVar[bool] = True
    """`ProviderRequest.thinking` becomes `reasoning_effort` (`True`: `"medium"`, `False`:
    `"none"`, an effort as it is); a `reasoning_effort` in `body_defaults` or `extra`
    wins. The vendor presets (`groq:`, `xai:`...) send their vendor's own fields
    (`Preset.thinking`)."""
    takes_sampling: ClassVar[frozenset[SamplingSetting]] = OPENAI_SAMPLING.takes
    """`ProviderRequest.sampling` becomes `top_p`, `stop` (a list), `seed`,
    `presence_penalty` and `frequency_penalty`; no `top_k` (the API has none, so a turn
    setting it is refused when made). The field in `body_defaults` or `extra` wins. The
    vendor presets take what their vendor documents (`Preset.sampling`)."""
    takes_strict_tools: ClassVar[bool] = True
    """A strict tool (`ToolSchema.strict`) is sent with `"strict": true` and its schema in
    OpenAI's strict subset (`neuron_tool.strict_form`: objects closed, optional parameters
    required and nullable); the nulls the model then sends for optional parameters are
    dropped from its calls (`StrictForm.restore`), so the tool's defaults apply. A schema
    with no strict form (an object of free keys) is refused before the call, naming the
    tool and where. The vendor presets take it where their vendor documents it
    (`Preset.strict_tools`)."""

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
        self._system_role = system_role
        self._max_tokens_field = max_tokens_field
        self._reasoning_field = reasoning_field

    def request_body(self, request: ProviderRequest) -> dict[str, JsonValue]:
        """The JSON body `complete` would send for `request` (override to add fields).

        Raises:
            InvalidRequestError: a message holds content the API cannot take, a
                vendor preset's model does not take the thinking setting, the API
                takes no such sampling setting, or a strict tool's schema has no
                strict form.
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
                preset_thinking=self._preset_thinking(),
                sampling_fields=self._sampling_fields(),
            )
        except _wire.UnsupportedContentError as exc:
            raise InvalidRequestError(f"{self.name}: {exc}", provider=self.name) from exc

    def _preset_thinking(self) -> PresetThinking | None:
        """A vendor's own thinking fields (None: OpenAI's `reasoning_effort`)."""
        return None

    def _sampling_fields(self) -> PresetSampling | None:
        """The sampling settings the API takes and their fields (None: it takes none)."""
        return OPENAI_SAMPLING

    def _stream_options(self, body: dict[str, JsonValue]) -> None:
        # Without it the stream carries no usage, and the call could not be priced.
        body.setdefault("stream_options", {"include_usage": True})

    def _read_body(self, data: object, content: bytes, context: ErrorContext) -> Completion:
        if isinstance(data, dict) and "error" in data and "choices" not in data:
            raise self._error_in_200(data, content, context)
        try:
            return _wire.parse_completion(data, fallback_model=context.model)
        except _wire.MalformedCompletionError as exc:
            raise self._bad_body(f"a chat completion ({exc})", content, context) from None

    def _event_reader(self) -> StreamAccumulator:
        return StreamAccumulator()

    def _finish_stream(self, reader: StreamAccumulator, context: ErrorContext) -> Completion:
        if reader.chunks == 0:
            raise self._bad_body("a stream of chat completion chunks", b"", context)
        if not reader.complete:
            raise self._cut_off(context, reader.chunks, "finish_reason")
        return _wire.parse_completion(reader.body(), fallback_model=context.model)
