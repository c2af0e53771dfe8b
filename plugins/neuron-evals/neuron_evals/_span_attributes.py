"""A run's values as OpenTelemetry attributes: scalars as they are, else JSON, bounded (private).

Pure Python: neuron-evals imports it whether or not OpenTelemetry is installed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final, TypeAlias

from ._json import to_json_value
from .report_case import EvaluationResult

__all__ = [
    "MAX_ATTRIBUTE_CHARS",
    "Scalar",
    "attribute_value",
    "bounded",
    "bounded_tail",
    "results_attribute",
]

MAX_ATTRIBUTE_CHARS: Final = 8_192
"""The longest text an evaluation span's attribute holds; past it the text is cut, saying so.

Why a bound: a case's inputs or output may be megabytes (a document, an
image's base64), and every span is held in memory and sent to a backend,
which may refuse or silently drop an oversized one.
"""

Scalar: TypeAlias = bool | int | float | str
"""What an attribute holds here (OpenTelemetry also takes sequences, unused)."""


def bounded(text: str) -> str:
    """`text`, or its first `MAX_ATTRIBUTE_CHARS` characters and a note of its full length."""
    if len(text) <= MAX_ATTRIBUTE_CHARS:
        return text
    return f"{text[:MAX_ATTRIBUTE_CHARS]}... [cut: {len(text)} characters in all]"


def bounded_tail(text: str) -> str:
    """`text`, or a note of its full length and its end: `MAX_ATTRIBUTE_CHARS` in all.

    For a stack trace: its end names the function that raised, and the error.
    The note counts in the bound, so a text bounded once is left as it is.
    """
    if len(text) <= MAX_ATTRIBUTE_CHARS:
        return text
    note = f"[cut: {len(text)} characters in all] ..."
    return note + text[len(text) - (MAX_ATTRIBUTE_CHARS - len(note)) :]


def attribute_value(value: object) -> Scalar:
    """`value` as an attribute: a bool or number as it is, a string bounded, else bounded JSON."""
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return bounded(value)
    encoded = json.dumps(to_json_value(value), ensure_ascii=False, separators=(",", ":"))
    return bounded(encoded)


def results_attribute(results: Mapping[str, EvaluationResult]) -> Scalar:
    """Results by name, as JSON objects of `name`, `value`, `reason`, `source` (pydantic-evals')."""
    return attribute_value(
        {name: result.model_dump(mode="json") for name, result in results.items()}
    )
