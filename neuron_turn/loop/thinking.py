"""Thinking: one setting for how much a model reasons before it answers, on any provider.

`NeuronTurnConfig(thinking=...)` takes `True` (the provider's default effort),
`False` (off, where the model allows it) or an effort: `"minimal"`, `"low"`,
`"medium"`, `"high"`, `"xhigh"`, as pydantic-ai's `thinking` setting does. Each
provider plugin maps it to its API (Anthropic's thinking budget, OpenAI's
`reasoning_effort`, Gemini's `thinkingConfig`, Ollama's `think`) and says so in
`Provider.takes_thinking`; a level an API lacks becomes the nearest it has. A
turn that sets it over a provider that does not take it is refused when the
turn is made, never sent without it. A provider option or `extra` field of
the API's own (`{"thinking": {...}}`, `reasoning_effort`) wins over it.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

from layer0 import NonRetryableError

__all__ = [
    "THINKING_EFFORTS",
    "Thinking",
    "ThinkingEffort",
    "UnsupportedThinkingError",
    "check_provider_thinking",
    "checked_thinking",
]

ThinkingEffort: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh"]
"""How hard the model thinks, from least to most."""

Thinking: TypeAlias = bool | ThinkingEffort
"""`True` (the provider's default effort), `False` (off) or a `ThinkingEffort`."""

THINKING_EFFORTS: Final[tuple[ThinkingEffort, ...]] = ("minimal", "low", "medium", "high", "xhigh")
"""Every effort, from least to most."""


class UnsupportedThinkingError(NonRetryableError, ValueError):
    """A thinking setting that is not one, or a provider that does not take it."""


def checked_thinking(value: object) -> Thinking | None:
    """`value` when it is a thinking setting (or None).

    Raises:
        UnsupportedThinkingError: naming the value and what it may be.
    """
    if value is None or isinstance(value, bool) or value in THINKING_EFFORTS:
        return value
    raise UnsupportedThinkingError(
        f"thinking is True, False or one of {', '.join(THINKING_EFFORTS)}; got {value!r}"
    )


def check_provider_thinking(thinking: Thinking | None, provider: object) -> None:
    """Refuse a `thinking` setting that `provider` does not take (`Provider.takes_thinking`).

    Raises:
        UnsupportedThinkingError: naming the provider.
    """
    if thinking is not None and not getattr(provider, "takes_thinking", False):
        raise UnsupportedThinkingError(
            f"the provider {type(provider).__name__} does not take a thinking setting "
            f"(thinking={thinking!r}); leave it unset, or set the API's own field in extra"
        )
