"""Fixtures of the OpenAI provider tests."""

from __future__ import annotations

import os

import pytest

from ._support import KEY


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The real key when re-recording (NEURON_RECORD=1), else a fake one."""
    if os.environ.get("NEURON_RECORD") == "1":
        return os.environ["OPENAI_API_KEY"]
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY
