"""`ModelSettings`: how the model is asked, for one run, over the turn's own settings.

`turn.run(prompt, model_settings=ModelSettings(temperature=0, thinking="high"))`
changes these settings for that run alone, as pydantic-ai's
`run(model_settings=...)` and the Agents SDK's `RunConfig(model_settings=...)`
do; what it leaves unset (None) is the turn's (`NeuronTurnConfig`), and a
`sampling` is laid over the turn's setting by setting. It travels in the
input's options (`TurnInput.metadata["neuron_turn"]["model_settings"]`), so an
input sent as JSON, an orchestrator's dispatch, a Temporal worker or a resume
after an approval pause answers with the same settings:

    {"model_settings": {"temperature": 0.2, "max_tokens": 800, "thinking": "low",
                        "sampling": {"seed": 7, "stop_sequences": ["END"]},
                        "parallel_tool_calls": false}}

A setting the turn's provider does not take is refused before any model call,
as the turn's own are when it is made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from pydantic import JsonValue

from layer0 import NonRetryableError
from neuron_tool import RunContext

from .sampling import Sampling, check_provider_sampling, finite_number
from .thinking import Thinking, check_provider_thinking, checked_thinking

__all__ = [
    "InvalidModelSettingsError",
    "ModelSettings",
    "StepModelSettings",
    "StepModelSettingsError",
]

_KEYS: Final = ("temperature", "max_tokens", "thinking", "sampling", "parallel_tool_calls")


class InvalidModelSettingsError(NonRetryableError, ValueError):
    """A model setting whose value no API takes, or model settings that are not an object."""


class StepModelSettingsError(NonRetryableError):
    """`NeuronTurnConfig.step_model_settings` raised, or returned what is no `ModelSettings`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSettings:
    """Settings of the model's requests; None leaves the turn's (`NeuronTurnConfig`) own.

    Raises:
        InvalidModelSettingsError: a value of the wrong type or out of range, naming it.
        neuron_turn.UnsupportedThinkingError: `thinking` is not a thinking setting.
    """

    temperature: float | None = None
    """How random the answer is, 0 or more (the API's own bound above)."""
    max_tokens: int | None = None
    """Most tokens one answer may take (1 or more)."""
    thinking: Thinking | None = None
    """`True`, `False` or an effort (`neuron_turn.loop.thinking`)."""
    sampling: Sampling | None = None
    """Laid over the turn's `Sampling` setting by setting."""
    parallel_tool_calls: bool | None = None
    """Whether the model may ask for several tools in one answer."""

    def __post_init__(self) -> None:
        temperature = self.temperature
        if temperature is not None and not (finite_number(temperature) and temperature >= 0):
            raise _invalid("temperature", temperature, "a number, 0 or more")
        tokens = self.max_tokens
        if tokens is not None and not (
            isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 1
        ):
            raise _invalid("max_tokens", tokens, "a whole number, 1 or more")
        checked_thinking(self.thinking)
        if self.sampling is not None and not isinstance(self.sampling, Sampling):
            raise _invalid("sampling", self.sampling, "a Sampling(...)")
        parallel = self.parallel_tool_calls
        if parallel is not None and not isinstance(parallel, bool):
            raise _invalid("parallel_tool_calls", parallel, "true or false")

    def __repr__(self) -> str:
        """The settings this sets alone: `ModelSettings(temperature=0)`."""
        shown = ", ".join(
            f"{key}={getattr(self, key)!r}" for key in _KEYS if getattr(self, key) is not None
        )
        return f"ModelSettings({shown})"

    def to_json(self) -> dict[str, JsonValue]:
        """The settings this sets, as an input's options carry them (`from_json` reads it)."""
        fields: dict[str, JsonValue] = {}
        for key in _KEYS:
            value = getattr(self, key)
            if value is not None:
                fields[key] = value.to_json() if isinstance(value, Sampling) else value
        return fields

    @classmethod
    def from_json(cls, value: JsonValue) -> ModelSettings:
        """Read `to_json`'s form.

        Raises:
            InvalidModelSettingsError: not an object, or a key that is no setting.
            neuron_turn.InvalidSamplingError: a sampling setting no API takes.
            neuron_turn.UnsupportedThinkingError: a thinking value that is none.
        """
        if not isinstance(value, dict):
            raise InvalidModelSettingsError(f"model_settings must be an object, not {value!r}")
        unknown = sorted(set(value) - set(_KEYS))
        if unknown:
            raise InvalidModelSettingsError(
                f"model_settings has unknown keys {unknown}; known: {list(_KEYS)}"
            )
        sampling = value.get("sampling")
        return cls(
            temperature=value.get("temperature"),  # type: ignore[arg-type]  # checked when made
            max_tokens=value.get("max_tokens"),  # type: ignore[arg-type]
            thinking=value.get("thinking"),  # type: ignore[arg-type]
            sampling=None if sampling is None else Sampling.from_json(sampling),
            parallel_tool_calls=value.get("parallel_tool_calls"),  # type: ignore[arg-type]
        )

    def over(self, base: ModelSettings) -> ModelSettings:
        """These settings where set, `base`'s elsewhere; a `sampling` laid over `base`'s."""
        sampling = self.sampling
        return ModelSettings(
            temperature=base.temperature if self.temperature is None else self.temperature,
            max_tokens=base.max_tokens if self.max_tokens is None else self.max_tokens,
            thinking=base.thinking if self.thinking is None else self.thinking,
            sampling=base.sampling if sampling is None else sampling.over(base.sampling),
            parallel_tool_calls=(
                base.parallel_tool_calls
                if self.parallel_tool_calls is None
                else self.parallel_tool_calls
            ),
        )

    def check_provider(self, provider: object) -> None:
        """Refuse what `provider` does not take, as a turn's own settings are refused.

        Raises:
            neuron_turn.UnsupportedThinkingError: `thinking` is set and the provider
                takes no thinking setting.
            neuron_turn.UnsupportedSamplingError: a sampling setting it does not take.
        """
        check_provider_thinking(self.thinking, provider)
        check_provider_sampling(self.sampling, provider)


def _invalid(name: str, value: object, wanted: str) -> InvalidModelSettingsError:
    return InvalidModelSettingsError(f"model setting {name} must be {wanted}; got {value!r}")


StepModelSettings: TypeAlias = Callable[[RunContext[Any]], ModelSettings | None]
"""Decides a step's model settings from its `RunContext` (`step`, `usage`, `deps`), before
each model call: what it returns is laid over the run's settings for that call (None:
the run's). pydantic-ai's `model_settings` given as a function."""
