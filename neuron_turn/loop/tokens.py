"""Token accounting: a character estimate, calibrated per model by what providers report.

The estimate (characters / 4, images a fixed size) needs no tokenizer and
is the same for every provider, but real tokenizers differ from it by a
factor that depends on the model and the text. `TokenMeter` learns that
factor per model from each call's reported input tokens, and the loop
measures the context as the last reported figure plus a calibrated estimate
of what was added since, so the count follows the provider's own over a
long session instead of drifting from it.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue
from pydantic_core import PydanticSerializationError, to_json

from layer0 import Base64Source
from neuron_tool import ToolSchema

from .provider import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    RawPart,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_TOKENS",
    "RunningEstimate",
    "TokenMeter",
    "estimate_overhead",
    "estimate_tokens",
]

CHARS_PER_TOKEN: Final = 4
"""The characters one token stands for in the estimate."""

IMAGE_TOKENS: Final = 1_000
"""What one image counts for in the estimate, whatever its size."""

_MIN_RATIO: Final = 0.25
_MAX_RATIO: Final = 4.0
_WEIGHT: Final = 0.5
"""How much one new observation moves a model's ratio (the rest is its history)."""


def estimate_tokens(messages: Sequence[ProviderMessage]) -> int:
    """Return about how many tokens `messages` take: characters / 4, rounded up."""
    return _tokens(sum(map(_units, messages)))


_IMAGE_UNITS: Final = IMAGE_TOKENS * CHARS_PER_TOKEN
"""An image counted as characters: a whole number of tokens, so one running sum of
characters and images rounds exactly as counting them apart would."""


def _tokens(units: int) -> int:
    return -(-units // CHARS_PER_TOKEN)


def _units(message: ProviderMessage) -> int:
    """The characters of one message, each image counted as `_IMAGE_UNITS`."""
    units = 0
    for part in message.content:
        # Exact types first: the loop sizes every message it adds, most of them these.
        if type(part) is TextPart:
            units += len(part.text)
        elif type(part) is ToolResultPart:
            units += len(part.content)
            for file in part.files:
                units += _IMAGE_UNITS if isinstance(file, ImagePart) else _document_units(file)
        elif type(part) is ToolUsePart:
            units += len(part.name) + _json_size(part.input)
        elif isinstance(part, ImagePart):
            units += _IMAGE_UNITS
        elif isinstance(part, DocumentPart):
            units += _document_units(part)
        else:
            units += _chars(part)
    return units


class RunningEstimate:
    """`estimate_tokens` of a message list that grows at its end, in time per new message.

    The loop estimates its whole context after every model call; re-reading every
    message each time would make a step's cost grow with the history. The sums of
    the messages seen so far are kept per position, and checked against the list:
    another list, or a changed last message (one taken off and replaced), starts over.
    """

    __slots__ = ("_last", "_of", "_sums")

    def __init__(self) -> None:
        """Start with nothing counted."""
        self._of: list[ProviderMessage] | None = None
        self._last: ProviderMessage | None = None
        self._sums = [0]

    def tokens(
        self, messages: list[ProviderMessage], start: int = 0, end: int | None = None
    ) -> int:
        """Return `estimate_tokens(messages[start:end])`."""
        sums = self._caught_up(messages)
        return _tokens(sums[len(messages) if end is None else end] - sums[start])

    def _caught_up(self, messages: list[ProviderMessage]) -> list[int]:
        sums = self._sums
        done = len(sums) - 1
        if (
            self._of is not messages
            or done > len(messages)
            or (done and messages[done - 1] is not self._last)
        ):
            self._of, self._sums, done = messages, [0], 0
            sums = self._sums
        if done < len(messages):
            total = sums[-1]
            for index in range(done, len(messages)):
                total += _units(messages[index])
                sums.append(total)
            self._last = messages[-1]
        return sums


def estimate_overhead(system: str | None, tools: Sequence[ToolSchema]) -> int:
    """Return about how many tokens the system prompt and tool schemas of a request take."""
    chars = len(system or "")
    for tool in tools:
        chars += len(tool.name) + len(tool.description) + _json_size(tool.input_schema)
    return -(-chars // CHARS_PER_TOKEN)


def _document_units(part: DocumentPart) -> int:
    """A document's size in characters: half its bytes (a PDF's text is a fraction of them).

    A rough start: the meter learns each model's real count from its replies.
    """
    source = part.source
    if isinstance(source, Base64Source):
        return max(_IMAGE_UNITS, len(source.data) * 3 // 8)
    return 4 * _IMAGE_UNITS  # fetched by the model: its size is not known here


def _chars(part: TextPart | ToolUsePart | ToolResultPart | ThinkingPart | RawPart) -> int:
    if isinstance(part, TextPart):
        return len(part.text)
    if isinstance(part, ToolUsePart):
        return len(part.name) + _json_size(part.input)
    if isinstance(part, ToolResultPart):
        return len(part.content)
    if isinstance(part, ThinkingPart):
        return len(part.thinking)
    return _raw_units(part.data)


_MEDIA_TYPE_KEYS: Final = ("mimeType", "media_type", "mime_type")


def _raw_units(data: JsonValue) -> int:
    """A provider's kept part in characters, each image inside it counted as `_IMAGE_UNITS`.

    Why: a kept part may hold an image's base64 (a Gemini draft image, signed), which
    the API counts as an image's tokens; by its length it would count as hundreds of
    thousands, and a context strategy would drop the session's history for it. An
    image is an object with a `data` string and an `image/...` media type under any
    API's name for it (`mimeType`, `media_type`, `mime_type`).
    """
    size = _json_size(data)
    pending: list[JsonValue] = [data] if isinstance(data, dict | list) else []
    while pending:  # no recursion: a kept part is nested as the provider's answer was
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, dict):
            base64 = _image_data(node)
            if base64 is None:
                pending.extend(node.values())
            else:  # base64 needs no escaping in JSON: its length is its size there
                size += _IMAGE_UNITS - len(base64)
    return size


def _image_data(node: dict[str, JsonValue]) -> str | None:
    """The base64 of the image `node` is, or None when it is none."""
    media = next((node[key] for key in _MEDIA_TYPE_KEYS if key in node), None)
    data = node.get("data")
    if isinstance(data, str) and isinstance(media, str) and media.startswith("image/"):
        return data
    return None


def _json_size(value: object) -> int:
    """The length of `value` as compact JSON, in UTF-8 bytes.

    An estimate's measure, so bytes serve as well as characters; one call into
    pydantic-core costs an eighth of `json.dumps`, which runs for every tool call.
    """
    try:
        return len(to_json(value))
    except PydanticSerializationError:
        # Text UTF-8 cannot hold (a lone surrogate a model sent): json.dumps escapes it.
        return len(json.dumps(value))


class TokenMeter:
    """Converts character estimates to a model's tokens, learning the ratio from its reports.

    One meter lives as long as its `NeuronTurn`, so what one turn learns
    about a model serves the next. Until a model has reported, its ratio is 1
    (the plain estimate). A ratio is kept within 0.25 and 4, so one odd
    report (a provider counting cached tokens apart, say) cannot swing it.
    """

    def __init__(self) -> None:
        """Start with no model calibrated."""
        self._ratios: dict[str, float] = {}
        self._overhead: tuple[str | None, tuple[ToolSchema, ...], int] | None = None

    def __repr__(self) -> str:
        return f"TokenMeter(ratios={self._ratios!r})"

    def ratio(self, model: str) -> float:
        """Return the model's tokens per estimated token (1 until it has reported)."""
        return self._ratios.get(model, 1.0)

    def calibrate(self, model: str, *, estimated: int, reported: int) -> None:
        """Learn from one call: `estimated` tokens by the estimate, `reported` by the provider.

        A report of 0 (a provider that does not count) teaches nothing.
        """
        if estimated <= 0 or reported <= 0:
            return
        sample = min(max(reported / estimated, _MIN_RATIO), _MAX_RATIO)
        previous = self._ratios.get(model)
        self._ratios[model] = (
            sample if previous is None else previous + _WEIGHT * (sample - previous)
        )

    def scale(self, model: str, estimated: int) -> int:
        """Return `estimated` tokens in the model's tokens, rounded up."""
        return math.ceil(estimated * self.ratio(model))

    def overhead(self, system: str | None, tools: Sequence[ToolSchema]) -> int:
        """Return `estimate_overhead(system, tools)`, remembered for the last pair asked.

        Every call of every run of a turn sends the same system prompt and the
        same tool schema objects, and estimating them encodes every schema as
        JSON; one remembered pair serves them all, and stays one pair however
        many different ones come.
        """
        memo = self._overhead
        if (
            memo is not None
            and memo[0] == system
            and len(memo[1]) == len(tools)
            and all(map(operator.is_, memo[1], tools))
        ):
            return memo[2]
        value = estimate_overhead(system, tools)
        self._overhead = (system, tuple(tools), value)
        return value

    def count(self, model: str, messages: Sequence[ProviderMessage]) -> int:
        """Return about how many of the model's tokens `messages` take."""
        return self.scale(model, estimate_tokens(messages))
