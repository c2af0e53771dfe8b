"""`LogLevel`: the severity of a `log` effect."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["LogLevel"]


class LogLevel(StrEnum):
    """Severity of a declared log line."""

    TRACE = "trace"
    DEBUG = "debug"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"
