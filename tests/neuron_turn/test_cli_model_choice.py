"""`neuron-turn run` without --model: the first configured provider, else the local model."""

from __future__ import annotations

import pytest

from neuron_turn import NoProviderConfiguredError
from neuron_turn.cli._run import choose_model


class _Manager:
    def __init__(self, *providers: str) -> None:
        self.providers = sorted(providers)

    def names(self, kind: str) -> list[str]:
        assert kind == "provider"
        return self.providers


def test_a_set_anthropic_key_picks_anthropic_first() -> None:
    manager = _Manager("anthropic", "openai", "local")
    environ = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    assert choose_model(manager, environ) == (  # type: ignore[arg-type]
        "anthropic:claude-haiku-4-5",
        "ANTHROPIC_API_KEY is set",
    )


def test_a_key_for_a_provider_not_installed_is_passed_over() -> None:
    manager = _Manager("openai", "local")
    model, reason = choose_model(manager, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})  # type: ignore[arg-type]
    assert (model, reason) == ("openai:gpt-4o-mini", "OPENAI_API_KEY is set")


def test_no_key_falls_back_to_the_local_model() -> None:
    model, reason = choose_model(_Manager("anthropic", "local"), {})  # type: ignore[arg-type]
    assert model == "local:default"
    assert "embedded local model" in reason


def test_nothing_configured_says_how_to_configure_a_provider() -> None:
    with pytest.raises(NoProviderConfiguredError) as exc:
        choose_model(_Manager("anthropic"), {})  # type: ignore[arg-type]
    message = str(exc.value)
    assert "ANTHROPIC_API_KEY" in message and "--model" in message and "anthropic" in message


def test_a_gemini_key_picks_google_after_anthropic_and_openai() -> None:
    manager = _Manager("anthropic", "google", "openai", "local")
    assert choose_model(manager, {"GEMINI_API_KEY": "k"}) == (  # type: ignore[arg-type]
        "google:gemini-2.5-flash",
        "GEMINI_API_KEY is set",
    )
    both = {"GEMINI_API_KEY": "k", "OPENAI_API_KEY": "k"}
    assert choose_model(manager, both)[0] == "openai:gpt-4o-mini"  # type: ignore[arg-type]
