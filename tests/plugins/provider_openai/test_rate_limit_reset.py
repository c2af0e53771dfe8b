"""OpenAI's reset headers give a wait only when they name a finite one.

Before, `x-ratelimit-reset-*` of "nan", "inf" or 400 digits gave a
`retry_after` of NaN or infinity: a wait no retry policy can compare or
schedule (Temporal's timedelta raised OverflowError / ValueError on it).
"""

from __future__ import annotations

import httpx
import pytest

from neuron_provider_openai._errors import parse_duration, retry_after


@pytest.mark.parametrize("text", ["nan", "inf", "Infinity", "9" * 400 + "s", "9" * 400])
def test_a_duration_that_is_not_finite_is_unreadable(text: str) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize("text", ["nan", "inf", "9" * 400 + "ms"])
def test_a_used_up_limit_whose_reset_is_not_finite_gives_no_wait(text: str) -> None:
    headers = httpx.Headers(
        {"x-ratelimit-reset-requests": text, "x-ratelimit-remaining-requests": "0"}
    )
    wait = retry_after(headers)
    assert wait is None


def test_a_finite_reset_beside_one_that_is_not_is_still_read() -> None:
    headers = httpx.Headers({"x-ratelimit-reset-requests": "nan", "x-ratelimit-reset-tokens": "2s"})
    assert retry_after(headers) == 2.0
