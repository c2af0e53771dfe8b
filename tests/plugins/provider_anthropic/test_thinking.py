from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from neuron_provider_anthropic._thinking import ModelThinking, model_thinking
from neuron_provider_anthropic._wire import build_body
from neuron_tool import ToolSchema
from neuron_turn.loop.provider import ProviderMessage, ThinkingPart
from neuron_turn.loop.provider_errors import InvalidRequestError
from neuron_turn.loop.tool_choice import ToolChoice

from ._support import FakeApi, message_json, reply, request, user

WEATHER = ToolSchema(
    name="get_weather",
    description="Weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
ADAPTIVE = {"type": "adaptive", "display": "summarized"}


def body_for(model: str, thinking: Any, **fields: Any) -> dict[str, Any]:
    req = replace(request(model=model, **fields), thinking=thinking)
    return build_body(req, model="default-model", max_tokens=4096)


@pytest.mark.parametrize(
    ("model", "shape"),
    [
        ("claude-opus-4-6", ModelThinking(adaptive=True, top_effort="max")),
        ("claude-sonnet-4-6", ModelThinking(adaptive=True, top_effort="max")),
        ("anthropic.claude-opus-4-6-v1", ModelThinking(adaptive=True, top_effort="max")),
        ("claude-opus-4-7", ModelThinking(adaptive=True, off_when_unset=True, top_effort="xhigh")),
        ("claude-opus-4-8", ModelThinking(adaptive=True, top_effort="xhigh")),
        ("claude-opus-5", ModelThinking(adaptive=True, top_effort="xhigh")),
        ("claude-sonnet-5-5", ModelThinking(adaptive=True, top_effort="xhigh")),
        ("claude-haiku-5-5", ModelThinking(adaptive=True, top_effort="high")),
        ("claude-mythos-preview", ModelThinking(True, always_thinks=True, top_effort="max")),
        ("claude-mythos-5", ModelThinking(True, always_thinks=True, top_effort="xhigh")),
        ("claude-fable-5-1", ModelThinking(True, always_thinks=True, top_effort="xhigh")),
        ("claude-sonnet-4-5-20250929", ModelThinking(adaptive=False)),
        ("claude-opus-4-5-20251101", ModelThinking(adaptive=False)),
        ("claude-opus-4-20250514", ModelThinking(adaptive=False)),
        ("claude-haiku-4-5", ModelThinking(adaptive=False)),
        ("claude-3-7-sonnet-20250219", ModelThinking(adaptive=False)),
        ("my-proxy-model", ModelThinking(adaptive=False)),
    ],
)
def test_a_models_name_says_how_it_takes_thinking(model: str, shape: ModelThinking) -> None:
    assert model_thinking(model) == shape


@pytest.mark.parametrize(
    ("level", "effort"),
    [
        ("minimal", "low"),
        ("low", "low"),
        ("medium", "medium"),
        ("high", "high"),
        ("xhigh", "xhigh"),
    ],
)
def test_an_effort_on_an_adaptive_model_is_adaptive_thinking_with_that_effort(
    level: str, effort: str
) -> None:
    body = body_for("claude-opus-4-7", level)
    assert body["thinking"] == ADAPTIVE
    assert body["output_config"] == {"effort": effort}


def test_xhigh_becomes_the_most_effort_each_model_has() -> None:
    def top(model: str) -> object:
        return body_for(model, "xhigh")["output_config"]

    assert top("claude-sonnet-4-6") == {"effort": "max"}
    assert top("claude-mythos-preview") == {"effort": "max"}
    assert top("claude-sonnet-5") == {"effort": "xhigh"}
    assert top("claude-haiku-5-5") == {"effort": "high"}


def test_thinking_on_leaves_an_adaptive_model_its_default_effort() -> None:
    body = body_for("claude-sonnet-4-6", True)
    assert body["thinking"] == ADAPTIVE and "output_config" not in body


def test_adaptive_thinking_needs_no_room_for_a_budget_under_max_tokens() -> None:
    body = body_for("claude-opus-4-6", "low", max_tokens=500)
    assert body["thinking"] == ADAPTIVE and body["max_tokens"] == 500


def test_an_older_model_still_gets_a_budget() -> None:
    body = body_for("claude-sonnet-4-5", "low")
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "output_config" not in body


def test_thinking_off_is_disabled_or_left_out_where_the_model_does_not_think_unasked() -> None:
    assert body_for("claude-sonnet-4-6", False)["thinking"] == {"type": "disabled"}
    assert body_for("claude-opus-5", False)["thinking"] == {"type": "disabled"}
    off = body_for("claude-opus-4-7", False)
    assert "thinking" not in off and "output_config" not in off


@pytest.mark.parametrize("model", ["claude-mythos-preview", "claude-fable-5"])
def test_thinking_off_for_a_model_that_always_thinks_is_refused_naming_it(model: str) -> None:
    with pytest.raises(InvalidRequestError, match=f"{model} always thinks") as caught:
        body_for(model, False)
    assert caught.value.retryable is False


def test_the_requests_model_decides_over_the_providers() -> None:
    body = build_body(
        replace(request(model="claude-opus-4-6"), thinking="medium"),
        model="claude-sonnet-4-5",
        max_tokens=4096,
    )
    assert body["thinking"] == ADAPTIVE and body["output_config"] == {"effort": "medium"}


def test_the_apis_own_thinking_in_extra_wins_and_no_effort_is_added() -> None:
    own = {"type": "enabled", "budget_tokens": 5000}
    body = body_for("claude-opus-4-6", "high", extra={"thinking": own})
    assert body["thinking"] == own and "output_config" not in body


def test_a_callers_output_config_goes_in_beside_the_effort_and_wins_its_keys() -> None:
    body = body_for("claude-opus-4-6", "low", extra={"output_config": {"effort": "max", "x": 1}})
    assert body["output_config"] == {"effort": "max", "x": 1}
    body = body_for("claude-opus-4-6", "low", extra={"output_config": {"x": 1}})
    assert body["output_config"] == {"effort": "low", "x": 1}


def test_a_forced_tool_choice_goes_as_auto_beside_adaptive_thinking() -> None:
    body = body_for("claude-opus-4-7", "high", tools=[WEATHER], tool_choice=ToolChoice.REQUIRED)
    assert body["tool_choice"] == {"type": "auto"}


async def test_an_opus_4_7_tool_loop_sends_adaptive_thinking_and_its_signed_blocks_back() -> None:
    # With display omitted a thinking block comes back empty but signed; it must go back.
    thinking = {"type": "thinking", "thinking": "", "signature": "c2ln"}
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
    api = FakeApi(reply(message_json([thinking, call], stop_reason="tool_use")), reply())
    provider = api.provider()
    asked = request(user("Weather?"), model="claude-opus-4-7", tools=[WEATHER])
    first = await provider.complete(replace(asked, thinking="high"))
    history = [user("Weather?"), ProviderMessage("assistant", first.content)]
    await provider.complete(replace(request(*history, model="claude-opus-4-7"), thinking="high"))

    assert first.content[0] == ThinkingPart("", "c2ln")
    for body in api.bodies:
        assert body["thinking"] == ADAPTIVE and body["output_config"] == {"effort": "high"}
    assert api.bodies[1]["messages"][1]["content"] == [thinking, call]


async def test_thinking_off_for_a_model_that_always_thinks_makes_no_call() -> None:
    api = FakeApi()
    with pytest.raises(InvalidRequestError, match="ask for 'low' effort instead"):
        await api.provider().complete(replace(request(model="claude-fable-5"), thinking=False))
    assert api.requests == []
