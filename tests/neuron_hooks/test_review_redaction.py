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
