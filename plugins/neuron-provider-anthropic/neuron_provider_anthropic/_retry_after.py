"""How long the API asks us to wait, read from a response's headers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final

RESET_HEADERS: Final = (
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
)
"""Anthropic's per-limit reset times (RFC 3339), sent with every response."""


def retry_after(
    headers: Mapping[str, str], *, rate_limited: bool, now: datetime | None = None
) -> float | None:
    """Return the seconds to wait before retrying, or None when the headers do not say.

    `retry-after-ms`, then `retry-after` (seconds or an HTTP date) win; for a
    rate-limited (429) response the earliest `anthropic-ratelimit-*-reset` comes
    next. Dates count from the response's `date` header, so a skewed local clock
    does not matter, else from `now`. Never negative.
    """
    seconds = _retry_after_ms(headers)
    if seconds is None:
        seconds = _retry_after_header(headers, now=now)
    if seconds is None and rate_limited:
        seconds = _earliest_reset(headers, now=now)
    return None if seconds is None else max(0.0, seconds)


def _retry_after_ms(headers: Mapping[str, str]) -> float | None:
    value = _number(headers.get("retry-after-ms"))
    return None if value is None else value / 1000


def _retry_after_header(headers: Mapping[str, str], *, now: datetime | None) -> float | None:
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    when = _http_date(raw)
    return None if when is None else _seconds_until(when, headers=headers, now=now)


def _earliest_reset(headers: Mapping[str, str], *, now: datetime | None) -> float | None:
    resets = [when for name in RESET_HEADERS if (when := _rfc3339(headers.get(name))) is not None]
    return _seconds_until(min(resets), headers=headers, now=now) if resets else None


def _seconds_until(when: datetime, *, headers: Mapping[str, str], now: datetime | None) -> float:
    reference = _http_date(headers.get("date")) or now or datetime.now(UTC)
    return (when - reference).total_seconds()


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    # float() accepts "nan" and "inf"; neither is a wait.
    return value if math.isfinite(value) else None


def _http_date(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _rfc3339(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
