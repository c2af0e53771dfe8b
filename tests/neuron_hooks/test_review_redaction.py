"""Hostile text through the redaction patterns: no input may make them slow."""

from __future__ import annotations

import time

import pytest

from neuron_hooks import redact

JWT = ".".join(
    [
        "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ]
)


@pytest.mark.parametrize("piece", ["eyJa-", "a-eyJ", "eyJ_-eyJ"])
def test_a_long_run_of_jwt_starts_without_dots_is_redacted_in_linear_time(piece: str) -> None:
    # 200 kB took 15 s when every `-eyJ` inside the run was a start to scan from.
    text = piece * 40_000

    started = time.perf_counter()
    assert redact(text) == text
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("before", ["", " ", "token=", '"', "(", "Bearer: ", "é"])
def test_a_jwt_is_still_redacted_after_anything_but_a_token_character(before: str) -> None:
    assert redact(f"{before}{JWT} done") == f"{before}[REDACTED] done"


GEMINI_KEY = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
GROQ_KEY = "gsk_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
XAI_KEY = "xai-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0f"
HF_TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz"


@pytest.mark.parametrize("key", [GEMINI_KEY, GROQ_KEY, XAI_KEY, HF_TOKEN])
def test_keys_of_the_other_providers_this_project_calls_are_redacted(key: str) -> None:
    # GEMINI_API_KEY's AIza… and the OpenAI-compatible presets' keys passed untouched.
    assert redact(f"use {key} now") == "use [REDACTED] now"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]"),
        ('{"Authorization": "Basic dXNlcjpwYXNz"}', '{"Authorization": "Basic [REDACTED]"}'),
        ("proxy-authorization=Digest abc123", "proxy-authorization=Digest [REDACTED]"),
        ("authorization: token abc123", "authorization: token [REDACTED]"),
        ("Authorization: Bearer abc.def", "Authorization: Bearer [REDACTED]"),
    ],
)
def test_an_authorization_header_of_any_scheme_is_redacted(text: str, expected: str) -> None:
    # Only Bearer was: a Basic header's user and password passed in the clear.
    assert redact(text) == expected
    assert redact(expected) == expected


@pytest.mark.parametrize(
    "text", ["the basic idea of authorization is", "an authorization_code flow", "AIza short"]
)
def test_words_near_the_new_patterns_are_left_alone(text: str) -> None:
    assert redact(text) is text


@pytest.mark.parametrize("piece", ["xai-", "authorization: ", "AIza-", "hf_a-"])
def test_the_new_patterns_take_linear_time_on_their_prefixes_repeated(piece: str) -> None:
    text = piece * 40_000

    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 1.0
