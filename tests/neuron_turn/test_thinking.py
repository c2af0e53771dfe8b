"""One thinking setting for any provider: checked when the config is made, on every request,
refused over a provider that does not take it."""

from __future__ import annotations

from typing import Any

import pytest

from layer0 import TurnInput
from neuron_turn import NeuronTurn, NeuronTurnConfig, UnsupportedThinkingError
from neuron_turn.testing import ScriptedProvider, text_response


@pytest.mark.parametrize("level", [True, False, "minimal", "low", "medium", "high", "xhigh"])
async def test_each_model_call_carries_the_turns_thinking_setting(level: Any) -> None:
    provider = ScriptedProvider([text_response("4")], takes_thinking=True)
    turn = NeuronTurn(provider, config=NeuronTurnConfig(model="m", thinking=level))
    await turn.execute(TurnInput(message="2+2?", trigger="user"))
    assert [request.thinking for request in provider.requests] == [level]


async def test_without_a_setting_requests_leave_thinking_to_the_model() -> None:
    provider = ScriptedProvider([text_response("4")])
    await NeuronTurn(provider).execute(TurnInput(message="2+2?", trigger="user"))
    assert provider.requests[0].thinking is None


@pytest.mark.parametrize("bad", ["max", "HIGH", 1, 0.5, ["high"]])
def test_a_setting_that_is_not_one_is_refused_naming_it(bad: Any) -> None:
    with pytest.raises(
        UnsupportedThinkingError, match=r"thinking is True, False or one of minimal"
    ):
        NeuronTurnConfig(thinking=bad)


def test_a_turn_with_thinking_over_a_provider_that_does_not_take_it_is_refused_when_made() -> None:
    provider = ScriptedProvider([text_response("never")])
    with pytest.raises(UnsupportedThinkingError, match="ScriptedProvider does not take a thinking"):
        NeuronTurn(provider, config=NeuronTurnConfig(thinking="high"))
    assert provider.requests == []
