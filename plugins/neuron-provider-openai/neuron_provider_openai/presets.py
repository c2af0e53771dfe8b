"""Named OpenAI-compatible vendors: `"groq:<model>"`, `"deepseek:<model>"`, `"mistral:<model>"`...

Each `Preset` says where a vendor's Chat Completions API lives, which
environment variable holds its key, which genai-prices provider prices its
models, and what it does differently from OpenAI (its quirks). The plugin
registers one provider per preset (`preset_providers.py` holds the classes),
so `"groq:llama-3.3-70b-versatile"` works like `"openai:gpt-4o-mini"` with
Groq's URL, key and prices.

`Preset.thinking` says how the vendor takes `NeuronTurnConfig(thinking=...)`:
which body field, and which value each level becomes, model family by model
family (`ThinkingRule`), from the vendor's documentation (cited per preset).
`_wire.preset_thinking_fields` builds the fields from it.

`Preset.sampling` says which `NeuronTurnConfig(sampling=...)` settings the
vendor's Chat Completions API documents, and under which body field each goes
(`PresetSampling`: Mistral's seed is `random_seed`); the preset's class takes
exactly those (`takes_sampling`), so a turn setting another is refused when made.

`Preset.strict_tools` says whether the vendor's documentation has its Chat
Completions API take `"strict": true` on a function tool as OpenAI's strict mode
(constrained decoding of the arguments, the schema closed and every property
required); the preset's class takes strict tools only then (`takes_strict_tools`),
so a turn offering one elsewhere is refused when made, never sent unconstrained.

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
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

from neuron_turn.loop.output import OutputMode
from neuron_turn.loop.sampling import SAMPLING_SETTINGS, SamplingSetting

__all__ = [
    "OPENAI_SAMPLING",
    "PRESETS",
    "Preset",
    "PresetSampling",
    "PresetThinking",
    "ThinkingRule",
    "ThinkingShape",
    "get_preset",
]

ThinkingShape: TypeAlias = Literal[
    "reasoning_effort", "openrouter", "deepseek", "reasoning_enabled", "disable_reasoning"
]
"""How a vendor's body takes the setting (`_wire.preset_thinking_fields` writes each):

- `reasoning_effort`: `{"reasoning_effort": value}` (`off` for False);
- `openrouter`: `{"reasoning": {"effort": value}}`, `{"reasoning": {"enabled": true}}`
  for True without an effort;
- `deepseek`: `{"thinking": {"type": "enabled" | "disabled"}}`, plus
  `reasoning_effort` for an effort;
- `reasoning_enabled`: `{"reasoning": {"enabled": bool}}` (on or off only);
- `disable_reasoning`: `{"disable_reasoning": bool}` (on or off only).
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingRule:
    """How one family of a vendor's models takes the thinking setting."""

    models: str | None = None
    """A regular expression searched in the model name (None: any model, the fallback)."""
    shape: ThinkingShape | None = "reasoning_effort"
    """The body form (None: these models take no setting, a request with one is refused
    before the call, `note` saying why)."""
    efforts: tuple[str, str, str, str, str] | None = None
    """The value each effort becomes, in the order `minimal`, `low`, `medium`, `high`,
    `xhigh` (the nearest the API has); None: the shape takes no effort, only on/off."""
    on: str | None = None
    """The effort sent for `True` (None: thinking on at the model's own default effort)."""
    off: str | None = "none"
    """The value sent for `False` where the shape takes a value (None: the models always
    think, and False is refused before the call)."""
    note: str = ""
    """Why these models are ruled so, in a refusal's message."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PresetThinking:
    """How a vendor takes `NeuronTurnConfig(thinking=...)` on Chat Completions."""

    source: str
    """The vendor's documentation of its reasoning fields."""
    own_fields: tuple[str, ...]
    """The API's own fields for it: any of them in `body_defaults` or `extra` wins, and
    the setting adds nothing."""
    rules: tuple[ThinkingRule, ...]
    """The first rule whose `models` matches the model applies; the last should match any."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PresetSampling:
    """Which sampling settings an API documents, and the body field each goes to."""

    source: str
    """The API's documentation of those fields."""
    takes: frozenset[SamplingSetting]
    """The settings it takes (names from `neuron_turn.loop.sampling.SAMPLING_SETTINGS`)."""
    renamed: tuple[tuple[SamplingSetting, str], ...] = ()
    """`(setting, field)` where the body field is not the setting's name (`stop_sequences`
    goes to `stop` on every Chat Completions API)."""
    note: str = ""
    """What the vendor's models do differently, where its name cannot tell (for the docs)."""

    def field(self, setting: SamplingSetting) -> str:
        """The body field `setting` is sent in."""
        return dict(self.renamed).get(setting, setting)


_STOP: Final[tuple[SamplingSetting, str]] = ("stop_sequences", "stop")

OPENAI_SAMPLING: Final = PresetSampling(
    source="https://platform.openai.com/docs/api-reference/chat/create",
    takes=frozenset({"top_p", "stop_sequences", "seed", "presence_penalty", "frequency_penalty"}),
    renamed=(_STOP,),
)
"""OpenAI's Chat Completions: `top_p`, `stop` (a list), `seed` and both penalties; no
`top_k` (the API has none)."""

_OPENAI_STYLE: Final = ("low", "low", "medium", "high", "high")
"""`low`/`medium`/`high`, the values every `reasoning_effort` takes."""

_GPT_OSS: Final = ThinkingRule(
    models=r"gpt-oss",
    efforts=_OPENAI_STYLE,
    on="medium",
    off=None,
    note="gpt-oss always reasons; its least effort is thinking='low'",
)
"""OpenAI's gpt-oss models wherever they are served: `reasoning_effort`, never off."""

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
    thinking: PresetThinking | None = None
    """How the vendor takes the thinking setting (None: it has no documented field, and a
    turn that sets one is refused; set the API's own field in `extra`)."""
    sampling: PresetSampling | None = None
    """The sampling settings the vendor documents and their body fields (None: none, and
    a turn that sets one is refused; set the API's own field in `extra`)."""
    strict_tools: bool = False
    """Whether the vendor documents OpenAI's strict mode for function tools (`"strict":
    true`, the arguments decoded to the schema); False: a turn offering a strict tool is
    refused when made."""


PRESETS: Final[tuple[Preset, ...]] = (
    Preset(
        name="groq",
        base_url="https://api.groq.com/openai/v1",
        api_key_env="GROQ_API_KEY",
        price_provider_id="groq",
        # Groq refuses `reasoning` / `reasoning_content` on assistant messages (a 400);
        # json_schema only on some models.
        output_modes=_TOOL_FIRST,
        # https://console.groq.com/docs/reasoning: `reasoning_effort` is `none`/`default` on
        # Qwen 3, `low`/`medium`/`high` on gpt-oss (which always reasons). The reasoning
        # comes back in `message.reasoning` (parsed); `reasoning_format` is left to `extra`.
        thinking=PresetThinking(
            source="https://console.groq.com/docs/reasoning",
            own_fields=("reasoning_effort",),
            rules=(
                ThinkingRule(models=r"qwen3", efforts=("default",) * 5, on="default"),
                _GPT_OSS,
                # Groq documents the field for these two families only (a 400 elsewhere).
                ThinkingRule(shape=None, note="Groq reasons with Qwen 3 and gpt-oss only"),
            ),
        ),
        # https://console.groq.com/docs/api-reference#chat-create: top_p, stop (up to 4),
        # seed and both penalties, as OpenAI's; no top_k.
        sampling=PresetSampling(
            source="https://console.groq.com/docs/api-reference#chat-create",
            takes=OPENAI_SAMPLING.takes,
            renamed=(_STOP,),
        ),
        # No strict tools: Groq documents `strict: true` for `response_format` only (on
        # gpt-oss, https://console.groq.com/docs/structured-outputs), not on function tools.
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
        # https://api-docs.deepseek.com/guides/thinking_mode: `thinking: {type:
        # enabled|disabled}` (on by default, effort `high`), `reasoning_effort` low/high/max
        # (DeepSeek itself reads minimal as low and medium as high); the most is `max`.
        thinking=PresetThinking(
            source="https://api-docs.deepseek.com/guides/thinking_mode",
            own_fields=("thinking", "reasoning_effort"),
            rules=(ThinkingRule(shape="deepseek", efforts=("low", "low", "high", "high", "max")),),
        ),
        # https://api-docs.deepseek.com/api/create-chat-completion: top_p, stop (up to 16)
        # and both penalties; no seed, no top_k. In thinking mode (DeepSeek's default) the
        # API takes top_p and the penalties without error but ignores them
        # (https://api-docs.deepseek.com/guides/thinking_mode).
        sampling=PresetSampling(
            source="https://api-docs.deepseek.com/api/create-chat-completion",
            takes=frozenset({"top_p", "stop_sequences", "presence_penalty", "frequency_penalty"}),
            renamed=(_STOP,),
            note="in thinking mode (the default) top_p and the penalties are ignored",
        ),
        # No strict tools: https://api-docs.deepseek.com/guides/function_calling documents
        # `strict` mode as a beta, on another root (`https://api.deepseek.com/beta`).
    ),
    Preset(
        name="openrouter",
        base_url="https://openrouter.ai/api/v1",
        api_key_env="OPENROUTER_API_KEY",
        price_provider_id="openrouter",
        max_tokens_field="max_tokens",
        # json_schema depends on the routed model.
        output_modes=_TOOL_FIRST,
        # https://openrouter.ai/docs/use-cases/reasoning-tokens: `reasoning: {effort}` with
        # OpenRouter mapping each effort to the routed model (`none` turns it off),
        # `{enabled: true}` at the model's default; the reasoning comes back in `reasoning`.
        thinking=PresetThinking(
            source="https://openrouter.ai/docs/use-cases/reasoning-tokens",
            own_fields=("reasoning", "reasoning_effort", "include_reasoning"),
            rules=(
                ThinkingRule(
                    shape="openrouter", efforts=("minimal", "low", "medium", "high", "xhigh")
                ),
            ),
        ),
        # https://openrouter.ai/docs/api-reference/parameters: top_p, top_k, stop, seed and
        # both penalties, passed to the routed provider (one that lacks a field ignores it,
        # unless `provider: {require_parameters: true}` in extra routes around it).
        sampling=PresetSampling(
            source="https://openrouter.ai/docs/api-reference/parameters",
            takes=frozenset(SAMPLING_SETTINGS),
            renamed=(_STOP,),
            note="a routed provider without a field ignores it",
        ),
    ),
    Preset(
        name="mistral",
        base_url="https://api.mistral.ai/v1",
        api_key_env="MISTRAL_API_KEY",
        price_provider_id="mistral",
        max_tokens_field="max_tokens",
        # Mistral answers 422 to fields it does not know, `stream_options` among them.
        stream_usage=False,
        # https://docs.mistral.ai/capabilities/reasoning/adjustable: `reasoning_effort` is
        # `high` (a thinking chunk before the answer) or `none` (mistral-small-latest,
        # mistral-medium-3-5); the thinking comes back as `thinking` content chunks.
        thinking=PresetThinking(
            source="https://docs.mistral.ai/capabilities/reasoning/adjustable",
            own_fields=("reasoning_effort",),
            rules=(ThinkingRule(efforts=("high",) * 5, on="high"),),
        ),
        # https://docs.mistral.ai/api/#tag/chat: top_p, stop, `random_seed` (not `seed`:
        # Mistral answers 422 to unknown fields) and both penalties; no top_k.
        sampling=PresetSampling(
            source="https://docs.mistral.ai/api/#tag/chat",
            takes=OPENAI_SAMPLING.takes,
            renamed=(_STOP, ("seed", "random_seed")),
        ),
    ),
    Preset(
        name="xai",
        aliases=("grok",),
        base_url="https://api.x.ai/v1",
        api_key_env="XAI_API_KEY",
        price_provider_id="x-ai",
        # https://docs.x.ai/developers/model-capabilities/text/reasoning: grok-4.3 takes
        # `reasoning_effort` none/low/medium/high (default low); grok-3-mini low/high
        # (https://docs.x.ai/docs/guides/reasoning), and grok-3, grok-4, grok-4-fast,
        # grok-4-1-fast, grok-4.20 and grok-code-fast answer it with an error. A model not
        # named here gets the values grok-4.3 takes.
        thinking=PresetThinking(
            source="https://docs.x.ai/developers/model-capabilities/text/reasoning",
            own_fields=("reasoning_effort",),
            rules=(
                ThinkingRule(
                    models=r"grok-3-mini",
                    efforts=("low", "low", "high", "high", "high"),
                    off=None,
                    note="grok-3-mini always reasons, at low or high",
                ),
                ThinkingRule(
                    models=r"grok-(?:[12]\b|3(?!-mini)|4(?:$|-|\.1\b|\.20(?!-multi))|code)",
                    shape=None,
                    note=(
                        "xAI answers reasoning_effort with an error on this model; a "
                        "-reasoning or -non-reasoning variant, or grok-4.3, chooses instead"
                    ),
                ),
                ThinkingRule(efforts=_OPENAI_STYLE),
            ),
        ),
        # https://docs.x.ai/docs/guides/reasoning: "presencePenalty, frequencyPenalty and stop
        # parameters are not supported by reasoning models. Adding them in the request would
        # result in an error." Every current Grok model but the -non-reasoning variants
        # reasons (grok-4.3, grok-4, grok-3-mini...), and the name of a future one cannot
        # tell, so the preset takes top_p and seed only (the chat API reference,
        # https://docs.x.ai/docs/api-reference#chat-completions); for a non-reasoning
        # model set `stop` or a penalty in extra.
        sampling=PresetSampling(
            source="https://docs.x.ai/docs/guides/reasoning",
            takes=frozenset({"top_p", "seed"}),
            note="reasoning models refuse stop and the penalties (set them in extra for a "
            "non-reasoning model)",
        ),
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
        # https://docs.together.ai/docs/inference/chat/reasoning: gpt-oss takes
        # `reasoning_effort` low/medium/high (and always reasons); hybrid models
        # (DeepSeek, GLM, Kimi, Qwen) `reasoning: {enabled: bool}`, with no effort.
        thinking=PresetThinking(
            source="https://docs.together.ai/docs/inference/chat/reasoning",
            own_fields=("reasoning", "reasoning_effort", "chat_template_kwargs"),
            rules=(
                _GPT_OSS,
                ThinkingRule(shape="reasoning_enabled"),
            ),
        ),
        # https://docs.together.ai/docs/inference/chat/parameters: top_p, top_k, stop, seed
        # and both penalties (also repetition_penalty and min_p, left to extra).
        sampling=PresetSampling(
            source="https://docs.together.ai/docs/inference/chat/parameters",
            takes=frozenset(SAMPLING_SETTINGS),
            renamed=(_STOP,),
        ),
    ),
    Preset(
        name="fireworks",
        base_url="https://api.fireworks.ai/inference/v1",
        api_key_env="FIREWORKS_API_KEY",
        price_provider_id="fireworks",
        max_tokens_field="max_tokens",
        # https://docs.fireworks.ai/guides/reasoning: `reasoning_effort` low/medium/high (the
        # values every reasoning model there takes; some take more, e.g. `none`, set in
        # `extra`); the reasoning comes back in `reasoning_content`. No documented off.
        thinking=PresetThinking(
            source="https://docs.fireworks.ai/guides/reasoning",
            own_fields=("reasoning_effort", "thinking"),
            rules=(
                ThinkingRule(
                    efforts=_OPENAI_STYLE,
                    on="medium",
                    off=None,
                    note="Fireworks documents no value that turns reasoning off for all "
                    "models (set reasoning_effort in extra where the model takes `none`)",
                ),
            ),
        ),
        # https://docs.fireworks.ai/api-reference/post-chatcompletions: top_p, top_k, stop
        # and both penalties (also repetition_penalty and min_p, left to extra); the
        # reference documents no seed.
        sampling=PresetSampling(
            source="https://docs.fireworks.ai/api-reference/post-chatcompletions",
            takes=frozenset(
                {"top_p", "top_k", "stop_sequences", "presence_penalty", "frequency_penalty"}
            ),
            renamed=(_STOP,),
        ),
    ),
    Preset(
        name="cerebras",
        base_url="https://api.cerebras.ai/v1",
        api_key_env="CEREBRAS_API_KEY",
        price_provider_id="cerebras",
        # https://inference-docs.cerebras.ai/capabilities/reasoning: gpt-oss takes
        # `reasoning_effort` low/medium/high (and always reasons); Z.ai GLM
        # `disable_reasoning: bool`; the reasoning comes back in `reasoning`.
        thinking=PresetThinking(
            source="https://inference-docs.cerebras.ai/capabilities/reasoning",
            own_fields=("reasoning_effort", "disable_reasoning"),
            rules=(
                ThinkingRule(models=r"glm", shape="disable_reasoning"),
                replace(_GPT_OSS, models=None),  # the rest take gpt-oss's field and values
            ),
        ),
        # https://inference-docs.cerebras.ai/api-reference/chat-completions: top_p, stop (up
        # to 4), seed and both penalties; no top_k. (An older OpenAI-compatibility page listed
        # the penalties as refused; the API reference, and Cerebras' SDK built from it,
        # documents them.)
        sampling=PresetSampling(
            source="https://inference-docs.cerebras.ai/api-reference/chat-completions",
            takes=OPENAI_SAMPLING.takes,
            renamed=(_STOP,),
        ),
        # https://inference-docs.cerebras.ai/capabilities/tool-use: with `strict: true` on
        # a function tool its arguments "are guaranteed to match your schema exactly
        # through constrained decoding", under the rules of strict structured outputs
        # (https://inference-docs.cerebras.ai/capabilities/structured-outputs): OpenAI's
        # (objects closed, every property required, a nullable one as an `anyOf` with
        # null). Its limits are narrower (at most 5 `anyOf` branches, no `"type": [...]`
        # lists): the strict form keeps within them unless the tool's own schema does not.
        strict_tools=True,
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
