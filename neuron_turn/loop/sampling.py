"""Sampling settings beyond temperature, one form for every provider.

`NeuronTurnConfig(sampling=Sampling(top_p=0.9, stop_sequences=("END",), seed=7))`
goes on each model request as `ProviderRequest.sampling`, and each provider
plugin writes it in its API's fields (Anthropic's `top_k`, OpenAI's `stop`,
Gemini's `generationConfig.topP`, Ollama's `options.seed`...), as pydantic-ai's
`ModelSettings` does. A provider names the settings it maps in
`takes_sampling`; a turn that sets one its provider does not take is refused
when it is made, naming it, never sent without it (pydantic-ai drops such a
setting without a word). A provider option or `extra` field of the API's own
wins over it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, TypeAlias

from pydantic import JsonValue

from layer0 import NonRetryableError

__all__ = [
    "PLAIN_FIELDS",
    "SAMPLING_SETTINGS",
    "InvalidSamplingError",
    "Sampling",
    "SamplingSetting",
    "UnsupportedSamplingError",
    "check_provider_sampling",
    "finite_number",
]

SamplingSetting: TypeAlias = Literal[
    "top_p", "top_k", "stop_sequences", "seed", "presence_penalty", "frequency_penalty"
]
"""The name of one `Sampling` field."""

SAMPLING_SETTINGS: Final[tuple[SamplingSetting, ...]] = (
    "top_p",
    "top_k",
    "stop_sequences",
    "seed",
    "presence_penalty",
    "frequency_penalty",
)
"""Every sampling setting, as `Provider.takes_sampling` names them."""

PLAIN_FIELDS: Final[Mapping[SamplingSetting, str]] = {
    "top_p": "top_p",
    "top_k": "top_k",
    "stop_sequences": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}
"""Each setting under its own name, stop sequences as `stop`: the fields of Ollama's
`options` and of the llama.cpp server (for `Sampling.as_fields`)."""


class InvalidSamplingError(NonRetryableError, ValueError):
    """A sampling setting whose value no API takes (a `top_p` of 2, an empty stop sequence)."""


class UnsupportedSamplingError(NonRetryableError, ValueError):
    """A sampling setting the turn's provider does not take."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Sampling:
    """How the model picks its tokens; None (or no stop sequences) leaves the API's default.

    Raises:
        InvalidSamplingError: a value of the wrong type or out of range, naming it.
    """

    top_p: float | None = None
    """Nucleus sampling: only the most likely tokens whose probabilities add up to this
    (above 0, at most 1)."""
    top_k: int | None = None
    """Only the `top_k` most likely tokens (1 or more)."""
    stop_sequences: tuple[str, ...] = ()
    """Texts that end the answer where the model writes them (not included in it)."""
    seed: int | None = None
    """Asks for the same answer to the same request, where the API can."""
    presence_penalty: float | None = None
    """Between -2 and 2: above 0 makes the model less likely to repeat any token used."""
    frequency_penalty: float | None = None
    """Between -2 and 2: above 0 makes a token less likely the more it was used."""

    def __post_init__(self) -> None:
        if self.top_p is not None and not (finite_number(self.top_p) and 0 < self.top_p <= 1):
            raise _invalid("top_p", self.top_p, "a number above 0 and at most 1")
        if self.top_k is not None and not (_whole(self.top_k) and self.top_k >= 1):
            raise _invalid("top_k", self.top_k, "a whole number, 1 or more")
        if self.seed is not None and not _whole(self.seed):
            raise _invalid("seed", self.seed, "a whole number")
        for name in ("presence_penalty", "frequency_penalty"):
            value = getattr(self, name)
            if value is not None and not (finite_number(value) and -2 <= value <= 2):
                raise _invalid(name, value, "a number from -2 to 2")
        stops: object = self.stop_sequences  # a caller may pass a list, or a lone string
        if not isinstance(stops, list | tuple) or not all(isinstance(s, str) and s for s in stops):
            raise _invalid("stop_sequences", stops, "a sequence of non-empty strings")
        object.__setattr__(self, "stop_sequences", tuple(stops))

    def as_fields(self, names: Mapping[SamplingSetting, str]) -> dict[str, JsonValue]:
        """The settings this sets, under the API's own field names given in `names`.

        Stop sequences go as a list. A set setting `names` lacks is left out: a turn
        over a provider that does not take it was refused when made.
        """
        fields: dict[str, JsonValue] = {}
        for setting, field in names.items():
            value = getattr(self, setting)
            if value is not None and value != ():
                fields[field] = list(value) if setting == "stop_sequences" else value
        return fields

    def __repr__(self) -> str:
        """The settings this sets alone: `Sampling(seed=7)`."""
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._set())
        return f"Sampling({shown})"

    def _set(self) -> list[SamplingSetting]:
        return [name for name in SAMPLING_SETTINGS if getattr(self, name) not in (None, ())]

    def to_json(self) -> dict[str, JsonValue]:
        """The settings this sets, under their own names (`from_json` reads it back)."""
        return self.as_fields({name: name for name in SAMPLING_SETTINGS})

    @classmethod
    def from_json(cls, value: JsonValue) -> Sampling:
        """Read `to_json`'s form, as an input's options carry it.

        Raises:
            InvalidSamplingError: not an object, a key that is no setting, or a value
                no API takes (each named).
        """
        if not isinstance(value, dict):
            raise InvalidSamplingError(f"sampling must be an object, not {value!r}")
        unknown = sorted(set(value) - set(SAMPLING_SETTINGS))
        if unknown:
            raise InvalidSamplingError(
                f"sampling has unknown keys {unknown}; known: {list(SAMPLING_SETTINGS)}"
            )
        stops = value.get("stop_sequences")
        if stops is None:  # null leaves it unset, as it does every other setting
            stops = []
        if not isinstance(stops, list | tuple):
            raise _invalid("stop_sequences", stops, "a sequence of non-empty strings")
        settings: dict[str, Any] = {**value, "stop_sequences": tuple(stops)}
        return cls(**settings)

    def over(self, base: Sampling | None) -> Sampling:
        """These settings where set, `base`'s elsewhere (a run's over its turn's)."""
        if base is None:
            return self
        return replace(base, **{name: getattr(self, name) for name in self.names})

    @property
    def names(self) -> frozenset[SamplingSetting]:
        """The settings this sets."""
        return frozenset(self._set())


def check_provider_sampling(sampling: Sampling | None, provider: object) -> None:
    """Refuse the settings of `sampling` that `provider` does not take (`takes_sampling`).

    Raises:
        UnsupportedSamplingError: naming the settings and the provider.
    """
    if sampling is None:
        return
    missing = sampling.names - frozenset(getattr(provider, "takes_sampling", ()))
    if missing:
        listed = ", ".join(name for name in SAMPLING_SETTINGS if name in missing)
        raise UnsupportedSamplingError(
            f"the provider {type(provider).__name__} does not take the sampling setting(s) "
            f"{listed}; leave them unset, or set the API's own field in extra"
        )


def finite_number(value: object) -> bool:
    """Whether `value` is an int or a float (not a bool) that a float can hold, not NaN or inf.

    An int past a float's range (JSON bounds none) is no number an API takes, and
    `math.isfinite` raises `OverflowError` on it rather than say so.
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _invalid(name: str, value: object, wanted: str) -> InvalidSamplingError:
    return InvalidSamplingError(f"sampling {name} must be {wanted}; got {value!r}")
