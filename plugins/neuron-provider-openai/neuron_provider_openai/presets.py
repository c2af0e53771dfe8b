"""Named OpenAI-compatible vendors: `"groq:<model>"`, `"deepseek:<model>"`, `"mistral:<model>"`...

Each `Preset` says where a vendor's Chat Completions API lives, which
environment variable holds its key, which genai-prices provider prices its
models, and what it does differently from OpenAI (its quirks). The plugin
registers one provider per preset (`preset_providers.py` holds the classes),
so `"groq:llama-3.3-70b-versatile"` works like `"openai:gpt-4o-mini"` with
Groq's URL, key and prices.

This module imports nothing heavy: the plugin reads the table to register
the names, and listing plugins must not load httpx.

Left out on purpose (use `openai` with `base_url=` and `api_key=` for them):
Perplexity (its Sonar models take no tools), Azure OpenAI (an `api-key`
header and deployment URLs), Anthropic's and Google's compatibility layers
(their own plugins speak the native APIs), and self-hosted servers (vLLM,
llama.cpp, LM Studio, Ollama: no vendor key or price).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from neuron_turn.loop.output import OutputMode

__all__ = ["PRESETS", "Preset", "get_preset"]

_ALL_MODES: Final[tuple[OutputMode, ...]] = ("native", "tool", "prompted")
_TOOL_FIRST: Final[tuple[OutputMode, ...]] = ("tool", "native", "prompted")


@dataclass(frozen=True, slots=True, kw_only=True)
class Preset:
    """One OpenAI-compatible vendor: where it is, its key, its prices and its quirks."""

    name: str
    """The registered provider name users type: `"groq"` in `"groq:llama-3.3-70b-versatile"`."""
    base_url: str
    """The API root, up to and excluding `/chat/completions`."""
    api_key_env: str
    """The environment variable the key is read from (never `OPENAI_API_KEY`)."""
    price_provider_id: str
    """genai-prices' provider id for the vendor's models."""
    base_url_env: str | None = None
    """The environment variable that moves the API root, only where the vendor's own
    SDK reads one meaning the same root (Groq's and Cerebras' SDKs read a root without
    `/openai/v1` or `/v1`, so theirs are not read)."""
    aliases: tuple[str, ...] = ()
    """Other names reaching the same provider (`grok` for `xai`)."""
    max_tokens_field: str = "max_completion_tokens"
    """The body field `request.max_tokens` goes to (`max_tokens` where the API knows no other)."""
    reasoning_field: str | None = None
    """The assistant-message field `ThinkingPart`s are sent back in (None: dropped)."""
    stream_usage: bool = True
    """Send `stream_options: {include_usage: true}` on a stream (Mistral refuses the field
    and reports usage anyway)."""
    output_modes: tuple[OutputMode, ...] = _ALL_MODES
    """Typed-answer modes, the default first: `native` (`response_format: json_schema`)
    first only where every model of the vendor takes it."""


PRESETS: Final[tuple[Preset, ...]] = (
    Preset(
        name="groq",
        base_url="https://api.groq.com/openai/v1",
        api_key_env="GROQ_API_KEY",
        price_provider_id="groq",
        # Groq refuses `reasoning` / `reasoning_content` on assistant messages (a 400);
        # json_schema only on some models.
        output_modes=_TOOL_FIRST,
    ),
    Preset(
        name="deepseek",
        base_url="https://api.deepseek.com",
        api_key_env="DEEPSEEK_API_KEY",
        price_provider_id="deepseek",
        max_tokens_field="max_tokens",
        # In thinking mode a tool loop must send `reasoning_content` back (else a 400).
        reasoning_field="reasoning_content",
        # JSON mode is `json_object` only: no json_schema.
        output_modes=("tool", "prompted"),
    ),
    Preset(
        name="openrouter",
        base_url="https://openrouter.ai/api/v1",
        api_key_env="OPENROUTER_API_KEY",
        price_provider_id="openrouter",
        max_tokens_field="max_tokens",
        # json_schema depends on the routed model.
        output_modes=_TOOL_FIRST,
    ),
    Preset(
        name="mistral",
        base_url="https://api.mistral.ai/v1",
        api_key_env="MISTRAL_API_KEY",
        price_provider_id="mistral",
        max_tokens_field="max_tokens",
        # Mistral answers 422 to fields it does not know, `stream_options` among them.
        stream_usage=False,
    ),
    Preset(
        name="xai",
        aliases=("grok",),
        base_url="https://api.x.ai/v1",
        api_key_env="XAI_API_KEY",
        price_provider_id="x-ai",
    ),
    Preset(
        name="together",
        base_url="https://api.together.xyz/v1",
        api_key_env="TOGETHER_API_KEY",
        base_url_env="TOGETHER_BASE_URL",
        price_provider_id="together",
        max_tokens_field="max_tokens",
        # json_schema only on some models.
        output_modes=_TOOL_FIRST,
    ),
    Preset(
        name="fireworks",
        base_url="https://api.fireworks.ai/inference/v1",
        api_key_env="FIREWORKS_API_KEY",
        price_provider_id="fireworks",
        max_tokens_field="max_tokens",
    ),
    Preset(
        name="cerebras",
        base_url="https://api.cerebras.ai/v1",
        api_key_env="CEREBRAS_API_KEY",
        price_provider_id="cerebras",
    ),
)
"""The vendors the plugin registers, in the order `neuron-turn plugins` lists them."""

_BY_NAME: Final[Mapping[str, Preset]] = MappingProxyType(
    {name: preset for preset in PRESETS for name in (preset.name, *preset.aliases)}
)


def get_preset(name: str) -> Preset:
    """Return the preset registered as `name` (or one of its aliases).

    Raises:
        LookupError: no preset has that name; the message lists those that do.
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        known = ", ".join(sorted(_BY_NAME))
        raise LookupError(f"no OpenAI-compatible preset {name!r}; known: {known}") from None
