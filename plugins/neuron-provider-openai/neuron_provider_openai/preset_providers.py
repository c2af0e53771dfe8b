"""One `OpenAIProvider` subclass per preset: `GroqProvider`, `DeepSeekProvider`...

Each class takes its vendor's URL, key variable, genai-prices id and quirks
from its `Preset` (`presets.py`); everything else is `OpenAIProvider`'s.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import JsonValue

from neuron_turn.loop.sampling import SamplingSetting

from .presets import Preset, PresetSampling, PresetThinking, get_preset
from .provider import OpenAIProvider

__all__ = [
    "CerebrasProvider",
    "DeepSeekProvider",
    "FireworksProvider",
    "GroqProvider",
    "MistralProvider",
    "OpenRouterProvider",
    "PresetProvider",
    "TogetherProvider",
    "XaiProvider",
    "preset_provider_class",
]


class PresetProvider(OpenAIProvider):
    """An `OpenAIProvider` for a named vendor; subclass it with `preset=` to add one.

    Unlike `openai` with a custom `base_url`, a preset treats any `base_url=`
    (its base-URL variable, a region, a gateway in front of the vendor) as
    the vendor still: the key from its own variable is required and genai-prices
    prices the call by the vendor's id. `require_api_key=False`,
    `lookup_prices=False` or `prices=` say otherwise. `OPENAI_API_KEY` and
    `OPENAI_BASE_URL` are never read.

    Args:
        model: The model used when a request names none.
        **options: `OpenAIProvider`'s keyword arguments; `max_tokens_field` and
            `reasoning_field` default to the preset's.

    Example:
        ```python
        class AcmeProvider(PresetProvider, preset=Preset(name="acme", ...)):
            \"\"\"Acme's Chat Completions API.\"\"\"
        ```
    """

    preset: ClassVar[Preset]
    """The vendor this class speaks to."""
    takes_thinking: ClassVar[bool] = False
    """Whether the vendor takes the thinking setting: true where its `Preset.thinking`
    says how (Groq's `reasoning_effort`, OpenRouter's `reasoning`, DeepSeek's
    `thinking`...); else a turn with one is refused: set the API's own field in `extra`."""
    takes_sampling: ClassVar[frozenset[SamplingSetting]] = frozenset()
    """The sampling settings the vendor documents (`Preset.sampling`: Mistral's seed as
    `random_seed`, no `seed` on DeepSeek, no `stop` or penalties on xAI...); a turn with
    another is refused when made: set the API's own field in `extra`."""
    takes_strict_tools: ClassVar[bool] = False
    """Whether strict tools are sent in strict mode, as `OpenAIProvider` sends them: true
    where the vendor documents OpenAI's strict mode for function tools
    (`Preset.strict_tools`: Cerebras); else a turn offering one is refused when made."""
    infers_strict_tools: ClassVar[bool] = False
    """A vendor's strict mode is asked for only by a tool that asks for it: Cerebras' has
    narrower limits than OpenAI's (at most 5 `anyOf` branches), which an output type's
    schema could pass."""

    def __init_subclass__(cls, *, preset: Preset | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if preset is None:  # a subclass of a preset's class keeps its preset
            return
        cls.preset = preset
        cls.name = preset.name
        cls.default_base_url = preset.base_url
        cls.api_key_env = preset.api_key_env
        cls.base_url_env = preset.base_url_env
        cls.price_provider_id = preset.price_provider_id
        cls.output_modes = preset.output_modes
        cls.takes_thinking = preset.thinking is not None
        cls.takes_sampling = preset.sampling.takes if preset.sampling else frozenset()
        cls.takes_strict_tools = preset.strict_tools

    def __init__(self, model: str = "", **options: Any) -> None:
        if not hasattr(type(self), "preset"):
            raise TypeError(
                "PresetProvider names no vendor: use a subclass (GroqProvider...) "
                "or subclass it with preset=Preset(...)"
            )
        options.setdefault("max_tokens_field", self.preset.max_tokens_field)
        options.setdefault("reasoning_field", self.preset.reasoning_field)
        super().__init__(model, **options)

    def _preset_thinking(self) -> PresetThinking | None:
        return self.preset.thinking

    def _sampling_fields(self) -> PresetSampling | None:
        return self.preset.sampling

    def _is_default_base_url(self) -> bool:
        # Whatever the URL, the vendor's key is required and its prices apply (see above).
        return True

    def _stream_options(self, body: dict[str, JsonValue]) -> None:
        if self.preset.stream_usage:
            super()._stream_options(body)


class GroqProvider(PresetProvider, preset=get_preset("groq")):
    """Groq (`"groq:<model>"`): `GROQ_API_KEY`."""


class DeepSeekProvider(PresetProvider, preset=get_preset("deepseek")):
    """DeepSeek (`"deepseek:<model>"`): `DEEPSEEK_API_KEY`; reasoning is sent back."""


class OpenRouterProvider(PresetProvider, preset=get_preset("openrouter")):
    """OpenRouter (`"openrouter:<vendor>/<model>"`): `OPENROUTER_API_KEY`."""


class MistralProvider(PresetProvider, preset=get_preset("mistral")):
    """Mistral AI (`"mistral:<model>"`): `MISTRAL_API_KEY`; streams without `stream_options`."""


class XaiProvider(PresetProvider, preset=get_preset("xai")):
    """xAI (`"xai:<model>"`, also `"grok:<model>"`): `XAI_API_KEY`."""


class TogetherProvider(PresetProvider, preset=get_preset("together")):
    """Together AI (`"together:<org>/<model>"`): `TOGETHER_API_KEY`, `TOGETHER_BASE_URL`."""


class FireworksProvider(PresetProvider, preset=get_preset("fireworks")):
    """Fireworks AI (`"fireworks:accounts/fireworks/models/<model>"`): `FIREWORKS_API_KEY`."""


class CerebrasProvider(PresetProvider, preset=get_preset("cerebras")):
    """Cerebras (`"cerebras:<model>"`): `CEREBRAS_API_KEY`; takes strict tools."""


_CLASSES: dict[str, type[PresetProvider]] = {
    cls.preset.name: cls
    for cls in (
        GroqProvider,
        DeepSeekProvider,
        OpenRouterProvider,
        MistralProvider,
        XaiProvider,
        TogetherProvider,
        FireworksProvider,
        CerebrasProvider,
    )
}


def preset_provider_class(name: str) -> type[PresetProvider]:
    """Return the provider class of the preset `name` (or one of its aliases).

    Raises:
        LookupError: no preset has that name.
    """
    return _CLASSES[get_preset(name).name]
