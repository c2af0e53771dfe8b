"""The unified thinking setting in Messages API terms, by model.

Claude 4.6 and later models think adaptively (`{"type": "adaptive"}`), steered by
`output_config.effort`; fixed budgets (`{"type": "enabled", "budget_tokens": N}`)
are deprecated there and refused by Opus 4.7, Mythos and Fable, which also refuse
`{"type": "disabled"}`. Older models take only a budget. Opus 4.7 and later omit
the thinking text unless asked, so adaptive thinking asks for its summary
(`"display": "summarized"`): a turn's `ThinkingPart`s, the viewer and the
streamed events then carry what the model thought.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal, TypeAlias

from pydantic import JsonValue

from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.thinking import Thinking

from ._name import PROVIDER

JsonObject: TypeAlias = dict[str, JsonValue]
Effort: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]

THINKING_BUDGETS: Final[Mapping[Thinking, int]] = {
    "minimal": 1024,
    "low": 2048,
    True: 10_000,
    "medium": 10_000,
    "high": 16_384,
    "xhigh": 32_768,
}
"""Extended thinking's `budget_tokens` for each setting, on models before 4.6."""
_MIN_BUDGET: Final = 1024

_EFFORTS: Final[Mapping[Thinking, Effort]] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
}
_ADAPTIVE: Final[JsonObject] = {"type": "adaptive", "display": "summarized"}
# The family, then the major and (one or two digits, not a date) minor version:
# claude-opus-4-6, anthropic.claude-sonnet-4-5-20250929-v1:0, claude-opus-5.
_MODEL: Final = re.compile(
    r"claude-(opus|sonnet|haiku|mythos|fable)(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?![0-9])"
)


@dataclass(frozen=True, slots=True)
class ModelThinking:
    """How one model takes thinking."""

    adaptive: bool
    """It thinks adaptively, steered by an effort (Claude 4.6 and later)."""
    always_thinks: bool = False
    """It refuses `{"type": "disabled"}` (Mythos, Fable)."""
    off_when_unset: bool = False
    """It refuses `{"type": "disabled"}` but does not think unless asked (Opus 4.7)."""
    top_effort: Effort = "high"
    """The effort `"xhigh"` becomes: `xhigh` where the model has it, else `max` or `high`."""


_BUDGETED: Final = ModelThinking(adaptive=False)


@lru_cache(maxsize=64)
def model_thinking(model: str) -> ModelThinking:
    """How `model` takes thinking, read from its name (budgets for a name it does not know)."""
    match = _MODEL.search(model)
    if match is None:
        return _BUDGETED
    family, major, minor = match.group(1), match.group(2), match.group(3)
    if family in ("mythos", "fable"):
        # Mythos Preview (no version) goes to `max`; the numbered ones have `xhigh`.
        top: Effort = "xhigh" if major else "max"
        return ModelThinking(adaptive=True, always_thinks=True, top_effort=top)
    version = (int(major or 0), int(minor or 0))
    if version < (4, 6):
        return _BUDGETED
    if family == "haiku":
        return ModelThinking(adaptive=True)
    return ModelThinking(
        adaptive=True,
        off_when_unset=family == "opus" and version == (4, 7),
        top_effort="max" if version == (4, 6) else "xhigh",
    )


def thinking_fields(
    thinking: Thinking, model: str, max_tokens: int
) -> tuple[JsonObject | None, Effort | None]:
    """The body's `thinking` and `output_config.effort` for a unified setting on `model`.

    Adaptive models get adaptive thinking (summarized) and, for an effort, that
    effort (`True` leaves the model's default); older ones a `budget_tokens` below
    `max_tokens` and no effort. `False` is `{"type": "disabled"}`, or nothing on a
    model that does not think unless asked.

    Raises:
        InvalidRequestError: `False` for a model that always thinks, or `max_tokens`
            leaving no room for the least budget.
    """
    shape = model_thinking(model)
    if thinking is False:
        return _off(shape, model), None
    if not shape.adaptive:
        return _budget(thinking, max_tokens), None
    if thinking is True:
        return dict(_ADAPTIVE), None
    return dict(_ADAPTIVE), shape.top_effort if thinking == "xhigh" else _EFFORTS[thinking]


def _off(shape: ModelThinking, model: str) -> JsonObject | None:
    if shape.always_thinks:
        raise InvalidRequestError(
            f"Anthropic: {model} always thinks, so thinking=False cannot be sent (the API "
            "refuses {'type': 'disabled'} for it); ask for 'low' effort instead",
            provider=PROVIDER,
        )
    return None if shape.off_when_unset else {"type": "disabled"}


def _budget(thinking: Thinking, max_tokens: int) -> JsonObject:
    # The API wants the budget below `max_tokens` and at least 1024 tokens.
    if max_tokens - 1 < _MIN_BUDGET:
        raise InvalidRequestError(
            f"Anthropic: thinking={thinking!r} needs max_tokens above {_MIN_BUDGET} (the least "
            f"thinking budget); got max_tokens={max_tokens}",
            provider=PROVIDER,
        )
    return {"type": "enabled", "budget_tokens": min(THINKING_BUDGETS[thinking], max_tokens - 1)}
