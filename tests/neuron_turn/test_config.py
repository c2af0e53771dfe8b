"""Config resolution: TurnConfig overrides NeuronTurnConfig defaults."""

from __future__ import annotations

from layer0 import TurnConfig
from neuron_turn import NeuronTurnConfig

from .support import TRUSTING, answer, ask, build, dollars


def test_defaults_apply_when_the_call_gives_no_config() -> None:
    defaults = NeuronTurnConfig(system="Be brief.", model="m1", max_turns=4)
    resolved = defaults.resolve(None)
    assert (resolved.system, resolved.model, resolved.max_turns) == ("Be brief.", "m1", 4)
    assert resolved.allowed_tools is None


def test_call_config_overrides_only_the_fields_it_sets() -> None:
    defaults = NeuronTurnConfig(model="m1", max_turns=4, max_cost=dollars("1"))
    resolved = defaults.resolve(TurnConfig(model="m2", max_duration=500))
    assert resolved.model == "m2"
    assert resolved.max_turns == 4
    assert resolved.max_cost == dollars("1")
    assert resolved.max_duration == 500


async def test_system_addendum_is_joined_to_the_base_prompt_with_a_newline() -> None:
    turn, provider = build([answer("ok")], config=NeuronTurnConfig(system="Base.", model="m"))
    await turn.execute(ask(config=TurnConfig(system_addendum="Extra.")))
    assert provider.requests[0].system == "Base.\nExtra."


async def test_system_addendum_alone_becomes_the_system_prompt() -> None:
    turn, provider = build([answer("ok")])
    await turn.execute(ask(config=TurnConfig(system_addendum="Only this.")))
    assert provider.requests[0].system == "Only this."


async def test_request_carries_model_max_tokens_temperature_extra_and_metadata() -> None:
    config = NeuronTurnConfig(model="m", max_tokens=77, temperature=0.5, extra={"seed": 1})
    turn, provider = build([answer("ok")], config=config)
    await turn.execute(ask(trace_id="t-1"))
    request = provider.requests[0]
    assert (request.model, request.max_tokens, request.temperature) == ("m", 77, 0.5)
    assert request.extra == {"seed": 1, "metadata": {"trace_id": "t-1"}}


async def test_call_model_override_reaches_the_provider() -> None:
    turn, provider = build([answer("ok")])
    await turn.execute(ask(config=TurnConfig(model="other")))
    assert provider.requests[0].model == "other"


async def test_tool_schemas_are_filtered_by_allowed_tools_effect_tools_included() -> None:
    turn, provider = build([answer("ok")])
    await turn.execute(ask(session="s", config=TurnConfig(allowed_tools=["add", "write_memory"])))
    assert [t.name for t in provider.requests[0].tools] == ["add", "write_memory"]


async def test_by_default_only_the_memory_tools_of_the_own_session_are_offered() -> None:
    turn, provider = build([answer("ok")])
    await turn.execute(ask(session="s"))
    tools = provider.requests[0].tools
    assert [t.name for t in tools] == ["add", "echo", "write_memory", "delete_memory"]
    assert tools[2].input_schema["properties"]["scope"]["enum"] == ["session"]  # type: ignore[index]


async def test_without_a_session_or_grants_no_effect_tool_is_offered() -> None:
    turn, provider = build([answer("ok")])
    await turn.execute(ask())
    assert [t.name for t in provider.requests[0].tools] == ["add", "echo"]


async def test_all_tools_and_effect_tools_are_offered_when_everything_is_granted() -> None:
    turn, provider = build([answer("ok")], config=TRUSTING)
    await turn.execute(ask())
    assert [t.name for t in provider.requests[0].tools] == [
        "add",
        "echo",
        "write_memory",
        "delete_memory",
        "delegate",
        "handoff",
        "signal",
    ]


async def test_effect_tools_can_be_turned_off() -> None:
    turn, provider = build([answer("ok")], config=NeuronTurnConfig(effect_tools=False))
    await turn.execute(ask())
    assert [t.name for t in provider.requests[0].tools] == ["add", "echo"]


async def test_empty_allowed_tools_offers_no_tools() -> None:
    turn, provider = build([answer("ok")])
    await turn.execute(ask(config=TurnConfig(allowed_tools=[])))
    assert provider.requests[0].tools == []
