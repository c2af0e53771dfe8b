from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from neuron_provider_anthropic._retry_after import RESET_HEADERS, retry_after

NOW = datetime(2026, 11, 22, 9, 0, 0, tzinfo=UTC)
DATE = "Sun, 22 Nov 2026 09:00:00 GMT"


def wait(headers: dict[str, str], *, rate_limited: bool = True) -> float | None:
    return retry_after(httpx.Headers(headers), rate_limited=rate_limited, now=NOW)


def test_retry_after_in_seconds() -> None:
    assert wait({"retry-after": "7"}) == 7.0
    assert wait({"retry-after": "1.5"}) == 1.5


def test_retry_after_ms_is_preferred_for_its_precision() -> None:
    assert wait({"retry-after-ms": "250", "retry-after": "1"}) == 0.25


def test_retry_after_as_http_date_counts_from_the_date_header() -> None:
    headers = {
        "retry-after": "Sun, 22 Nov 2026 10:00:30 GMT",
        "date": "Sun, 22 Nov 2026 10:00:00 GMT",
    }

    assert wait(headers) == 30.0


def test_retry_after_as_http_date_counts_from_now_without_a_date_header() -> None:
    assert wait({"retry-after": "Sun, 22 Nov 2026 09:00:12 GMT"}) == 12.0


def test_retry_after_wins_over_the_reset_headers() -> None:
    headers = {"retry-after": "3", "anthropic-ratelimit-requests-reset": "2026-11-22T09:01:00Z"}

    assert wait(headers) == 3.0


def test_earliest_reset_header_is_used_when_retry_after_is_missing() -> None:
    headers = {
        "date": DATE,
        "anthropic-ratelimit-requests-reset": "2026-11-22T09:00:40Z",
        "anthropic-ratelimit-tokens-reset": "2026-11-22T09:00:25Z",
        "anthropic-ratelimit-input-tokens-reset": "2026-11-22T09:00:10.5Z",
        "anthropic-ratelimit-output-tokens-reset": "2026-11-22T09:00:55Z",
    }

    assert wait(headers) == 10.5


@pytest.mark.parametrize("name", RESET_HEADERS)
def test_each_reset_header_is_read(name: str) -> None:
    assert wait({"date": DATE, name: "2026-11-22T09:00:05Z"}) == 5.0


def test_reset_headers_are_ignored_when_not_rate_limited() -> None:
    headers = {"date": DATE, "anthropic-ratelimit-requests-reset": "2026-11-22T09:00:05Z"}

    assert wait(headers, rate_limited=False) is None


def test_reset_in_the_past_gives_zero_not_a_negative_wait() -> None:
    assert wait({"date": DATE, "anthropic-ratelimit-tokens-reset": "2026-11-22T08:59:00Z"}) == 0.0


@pytest.mark.parametrize("value", ["soon", "nan", "inf", ""])
def test_unreadable_retry_after_is_ignored(value: str) -> None:
    assert wait({"retry-after": value}) is None


def test_no_headers_means_unknown() -> None:
    assert wait({}) is None
