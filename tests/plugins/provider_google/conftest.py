"""Fixtures of the Google provider tests."""

from __future__ import annotations

import os

import pytest

from ._support import KEY


@pytest.fixture(autouse=True)
def no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see only the keys they set (a developer's own key must not reach a mock)."""
    if os.environ.get("NEURON_RECORD") != "1":
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real key when re-recording (NEURON_RECORD=1), else a fake one in GEMINI_API_KEY."""
    if os.environ.get("NEURON_RECORD") == "1":
        return os.environ["GEMINI_API_KEY"]
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    return KEY
