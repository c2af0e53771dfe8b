"""The `log` effect, written to the standard library logger `neuron_orch_local`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Final

from layer0 import AgentId, LogEffect, LogLevel, WorkflowId

__all__ = ["LOGGER_NAME", "TRACE", "emit_log"]

LOGGER_NAME: Final = "neuron_orch_local"
"""The logger that `log` effects go to."""

TRACE: Final = 5
"""The stdlib level of `LogLevel.TRACE`: below DEBUG, so enabling DEBUG does not show it."""

_LEVELS: Final[Mapping[LogLevel, int]] = {
    LogLevel.TRACE: TRACE,
    LogLevel.DEBUG: logging.DEBUG,
    LogLevel.INFO: logging.INFO,
    LogLevel.WARN: logging.WARNING,
    LogLevel.ERROR: logging.ERROR,
}

_logger: Final = logging.getLogger(LOGGER_NAME)


def emit_log(effect: LogEffect, *, agent: AgentId, workflow_id: WorkflowId) -> None:
    """Log `effect.message` at its level.

    The record's extra attributes are `data` (the effect's data), `agent`,
    `workflow_id` and `log_level` (the layer0 level name).
    """
    level = _LEVELS[effect.level]
    if _logger.isEnabledFor(level):
        extra = {
            "data": effect.data,
            "agent": agent,
            "workflow_id": workflow_id,
            "log_level": effect.level.value,
        }
        # "%s": the message is the model's text, not a format string.
        _logger.log(level, "%s", effect.message, extra=extra)
