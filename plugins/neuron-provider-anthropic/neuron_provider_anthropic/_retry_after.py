"""How long the Anthropic API asks us to wait: the standard headers, then its reset times."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

from neuron_turn.loop import http_errors

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
    seconds = http_errors.retry_after(headers, now=now)
    if seconds is None and rate_limited:
        resets = [
            when for name in RESET_HEADERS if (when := _rfc3339(headers.get(name))) is not None
        ]
        if resets:
            seconds = http_errors.seconds_until(min(resets), headers, now=now)
    return seconds


def _rfc3339(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        return None
    # min() cannot compare naive and aware times; the API sends UTC.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
