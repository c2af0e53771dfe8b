"""The `log` effect, written to a standard library logger (`neuron_orch_local` by default).

Convention, shared by the orchestrators: `LogLevel.TRACE` is the stdlib
level `TRACE` (5, below DEBUG), the other levels are their stdlib namesakes
(`WARN` is `WARNING`), and the record's extra attributes are `data` (the
effect's data), `agent`, `workflow_id` and `log_level` (the layer0 level name).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Final

from layer0 import AgentId, LogEffect, LogLevel, WorkflowId

__all__ = ["LOGGER_NAME", "TRACE", "emit_log"]

LOGGER_NAME: Final = "neuron_orch_local"
"""The logger that `log` effects go to unless another is given."""

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


def emit_log(
    effect: LogEffect,
    *,
    agent: AgentId,
    workflow_id: WorkflowId,
    logger: logging.Logger | logging.LoggerAdapter[logging.Logger] = _logger,
) -> None:
    """Log `effect.message` at its level on `logger` (see the module doc for the record)."""
    level = _LEVELS[effect.level]
    if logger.isEnabledFor(level):
        extra = {
            "data": effect.data,
            "agent": agent,
            "workflow_id": workflow_id,
            "log_level": effect.level.value,
        }
        # "%s": the message is the model's text, not a format string.
        logger.log(level, "%s", effect.message, extra=extra)
