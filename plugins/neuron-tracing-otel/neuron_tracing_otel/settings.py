"""Whether tracing is on, and with content, as the environment says.

Cheap on purpose (no OpenTelemetry import): the plugin reads it every time
plugins load, and with tracing off nothing else of this package is imported.

- `NEURON_OTEL`: `1`/`true`/`yes`/`on` turns tracing on; `0`/`false`/`no`/`off`
  or unset leaves it off.
- `NEURON_OTEL_CAPTURE_CONTENT`, or the variable other GenAI
  instrumentations read, `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`:
  the same values; on records messages and tool arguments and results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .errors import TracingSettingError

__all__ = ["CAPTURE_VARIABLES", "ENABLE_VARIABLE", "capture_content", "tracing_enabled"]

ENABLE_VARIABLE: Final = "NEURON_OTEL"
"""The environment variable that turns tracing on."""

CAPTURE_VARIABLES: Final = (
    "NEURON_OTEL_CAPTURE_CONTENT",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
)
"""The environment variables that turn content capture on (the first one set wins)."""

_ON: Final = frozenset({"1", "true", "yes", "on"})
_OFF: Final = frozenset({"", "0", "false", "no", "off"})


def tracing_enabled(environ: Mapping[str, str]) -> bool:
    """Whether `environ` turns tracing on (`NEURON_OTEL`).

    Raises:
        TracingSettingError: the variable holds something other than a yes or a no.
    """
    return _flag(environ, ENABLE_VARIABLE)


def capture_content(environ: Mapping[str, str]) -> bool:
    """Whether `environ` asks for message content on the spans (off unless asked).

    Raises:
        TracingSettingError: the variable holds something other than a yes or a no.
    """
    for variable in CAPTURE_VARIABLES:
        if variable in environ:
            return _flag(environ, variable)
    return False


def _flag(environ: Mapping[str, str], variable: str) -> bool:
    value = environ.get(variable, "")
    folded = value.strip().lower()
    if folded in _ON:
        return True
    if folded in _OFF:
        return False
    raise TracingSettingError(variable, value, "1 or 0 (also true/false, yes/no, on/off)")
