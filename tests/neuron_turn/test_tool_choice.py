"""Tool choice: parsing, what each model call is sent, and the reset after a call."""

from __future__ import annotations

import pytest

from layer0 import NonRetryableError
from neuron_turn import NeuronTurnConfig, ToolChoice

from .support import answer, ask, build, call, calls


@pytest.mark.parametrize(
    ("text", "mode", "name"),
    [
        ("auto", "auto", None),
        ("none", "none", None),
        ("required", "required", None),
        ("search", "tool", "search"),
    ],
)
def test_a_tool_choice_parses_keywords_and_tool_names(
    text: str, mode: str, name: str | None
) -> None:
    choice = ToolChoice.parse(text)
    assert (choice.mode, choice.name) == (mode, name)
    assert str(choice) == text


@pytest.mark.parametrize("bad", ["", "  ", 3])
def test_an_empty_or_non_string_tool_choice_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="tool_choice must be"):
        ToolChoice.parse(bad)  # type: ignore[arg-type]


def test_a_named_mode_needs_a_name() -> None:
    with pytest.raises(ValueError, match="names a tool"):
        ToolChoice("tool")


def test_the_config_parses_its_tool_choice() -> None:
    config = NeuronTurnConfig(tool_choice="add")
    assert config.tool_choice == ToolChoice.tool("add")
    with pytest.raises(ValueError, match="output_retries"):
        NeuronTurnConfig(output_retries=-1)


async def test_a_forced_tool_is_sent_then_reverts_to_auto_after_the_call() -> None:
    turn, provider = build(
        [calls(call("c1", "add", a=1, b=2)), answer("3")],
        config=NeuronTurnConfig(model="m", tool_choice="add"),
    )
    output = await turn.execute(ask())
    assert output.exit_reason == "complete"
    assert [r.tool_choice for r in provider.requests] == [ToolChoice.tool("add"), ToolChoice.AUTO]


async def test_without_reset_a_forced_choice_holds_for_every_call() -> None:
    turn, provider = build(
        [calls(call("c1", "add", a=1, b=2)), calls(call("c2", "add", a=3, b=4)), answer("7")],
        config=NeuronTurnConfig(model="m", tool_choice="required", reset_tool_choice=False),
    )
    await turn.execute(ask())
    assert {r.tool_choice for r in provider.requests} == {ToolChoice.REQUIRED}


async def test_a_call_choice_in_the_metadata_overrides_the_config() -> None:
    turn, provider = build([answer("ok")], config=NeuronTurnConfig(model="m", tool_choice="add"))
    await turn.execute(ask(neuron_turn={"tool_choice": "none"}))
    assert provider.requests[0].tool_choice == ToolChoice.NONE
    assert "metadata" not in provider.requests[0].extra


async def test_no_tool_choice_sends_none_and_parallel_calls_only_with_tools() -> None:
    turn, provider = build([answer("ok")], config=NeuronTurnConfig(parallel_tool_calls=False))
    await turn.execute(ask())
    request = provider.requests[0]
    assert request.tool_choice is None
    assert request.parallel_tool_calls is False
    bare, bare_provider = build(
        [answer("ok")],
        tools=(),
        config=NeuronTurnConfig(parallel_tool_calls=False, effect_tools=False),
    )
    await bare.execute(ask())
    assert bare_provider.requests[0].parallel_tool_calls is None


async def test_a_choice_naming_a_tool_the_turn_does_not_offer_is_refused() -> None:
    turn, provider = build([answer("x")], config=NeuronTurnConfig(tool_choice="search"))
    with pytest.raises(NonRetryableError, match=r"'search'.*offered: add, echo"):
        await turn.execute(ask())
    assert provider.requests == []
