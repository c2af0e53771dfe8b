"""Strict tools: `strict: true` tools in structured outputs' subset, refused before the call when
the subset or the API's stated limits cannot take them."""

from __future__ import annotations

import copy
import json
import re
from typing import Annotated, Any

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from layer0 import TurnInput
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_anthropic._output_format import output_format_json
from neuron_provider_anthropic._wire import build_body
from neuron_tool import FunctionTool, ToolSchema, tool
from neuron_turn import NeuronTurn, OutputSpec
from neuron_turn.loop.provider_errors import InvalidRequestError
from tests.neuron_tool.test_strict import _SCHEMA_KEYS, _SCHEMAS

from ._support import API_KEY, FakeApi, message_json, reply, request
from .test_stream import END, START, block_start, delta, message_delta, sse, stop


class Stop(BaseModel):
    """A stop on a route."""

    city: str
    nights: int = 1


def plan_route(
    name: Annotated[str, Field(min_length=3)], stops: list[Stop], note: str | None = None
) -> str:
    """Plan a named route through its stops."""
    return f"{name}: " + ", ".join(f"{s.city} ({s.nights})" for s in stops) + f" [{note}]"


def schema_of(function_tool: FunctionTool) -> ToolSchema:
    return ToolSchema(
        name=function_tool.name,
        description=function_tool.description,
        input_schema=function_tool.input_schema,
        strict=function_tool.strict,
    )


def tools_sent(*tools: ToolSchema) -> list[dict[str, Any]]:
    body: dict[str, Any] = build_body(request(tools=list(tools)), model="m", max_tokens=100)
    return list(body["tools"])


STRING = {"type": "string"}
UNION = {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def numbered(
    count: int,
    properties: dict[str, Any] | None = None,
    *,
    required: bool = False,
    strict: bool | None = True,
    prefix: str = "t",
) -> list[ToolSchema]:
    """`count` tools named `{prefix}0`, `{prefix}1`... taking `properties` (optional unless
    `required`)."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties or {},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(properties or {})
    return [
        ToolSchema(name=f"{prefix}{i}", description="A tool.", input_schema=schema, strict=strict)
        for i in range(count)
    ]


def strings(count: int) -> dict[str, Any]:
    return {f"p{i}": STRING for i in range(count)}


def test_a_strict_tool_is_sent_strict_closed_with_its_optional_parameter_left_optional() -> None:
    [sent] = tools_sent(schema_of(FunctionTool(plan_route, strict=True)))

    assert list(sent) == ["name", "description", "input_schema", "strict"]
    assert sent["strict"] is True
    schema = sent["input_schema"]
    assert schema["additionalProperties"] is False
    assert schema["$defs"]["Stop"]["additionalProperties"] is False
    assert schema["$defs"]["Stop"]["required"] == ["city"]
    assert schema["required"] == ["name", "stops"] and "note" in schema["properties"]
    assert schema["properties"]["name"] == {"type": "string", "description": "{minLength: 3}"}


def test_a_strict_tools_own_schema_is_left_as_it_was() -> None:
    strict = schema_of(FunctionTool(plan_route, strict=True))
    before = copy.deepcopy(strict.input_schema)

    tools_sent(strict)

    assert strict.input_schema == before and "minLength" in json.dumps(before)


@pytest.mark.parametrize("strict", [None, False])
def test_a_tool_not_strict_is_sent_as_it_is_without_a_strict_key(strict: bool | None) -> None:
    loose = schema_of(FunctionTool(plan_route, strict=strict))

    [sent] = tools_sent(loose)

    assert sent == {
        "name": "plan_route",
        "description": loose.description,
        "input_schema": loose.input_schema,
    }


def test_only_the_strict_tools_of_a_request_are_sent_strict() -> None:
    sent = tools_sent(*numbered(1, strict=None, prefix="loose"), *numbered(1))

    assert [entry.get("strict") for entry in sent] == [None, True]


@tool(strict=True)
def tally(label: str, counts: dict[str, int]) -> int:
    """Add up counts by name."""
    return sum(counts.values())


async def test_a_strict_tool_of_free_keys_is_refused_naming_tool_and_path_unsent() -> None:
    api = FakeApi()
    provider = api.provider()

    with pytest.raises(InvalidRequestError, match="tool 'tally' cannot be strict") as caught:
        await provider.complete(request(tools=[schema_of(tally)]))

    message = str(caught.value)
    assert "$.counts is an object of free keys" in message and "strict=None" in message
    assert caught.value.retryable is False
    with pytest.raises(InvalidRequestError, match=re.escape("$.counts")):
        async for _ in provider.stream(request(tools=[schema_of(tally)])):
            pass
    assert api.requests == []


def test_a_schema_nested_past_what_the_api_takes_is_refused_not_a_crash() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(250):  # about as deep as a ToolSchema holds
        node = {"type": "array", "items": node}
    deep = ToolSchema(
        name="deep",
        description="An MCP server's schema.",
        input_schema={"type": "object", "properties": {"x": node}},
        strict=True,
    )

    with pytest.raises(InvalidRequestError, match="nests deeper than 100 levels"):
        tools_sent(deep)


def test_native_outputs_refusal_keeps_its_wording() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        output_format_json(OutputSpec(dict[str, int]).provider_schema())

    assert str(caught.value) == (
        "Anthropic: native output cannot use this schema: $ is an object of free keys, which "
        "structured outputs cannot ask for; use output mode 'tool' (the default) or 'prompted'"
    )


def test_twenty_strict_tools_are_sent_and_non_strict_ones_beside_them_do_not_count() -> None:
    sent = tools_sent(*numbered(20), *numbered(5, strict=None, prefix="loose"))

    assert sum(1 for entry in sent if entry.get("strict")) == 20 and len(sent) == 25


async def test_a_twenty_first_strict_tool_is_refused_before_any_request() -> None:
    api = FakeApi()

    with pytest.raises(InvalidRequestError, match=r"has 21 strict tools .* at most 20") as caught:
        await api.provider().complete(request(tools=numbered(21)))

    assert "t20" in str(caught.value) and "strict=None" in str(caught.value)
    assert api.requests == []


def test_up_to_24_optional_parameters_across_strict_tools_are_sent() -> None:
    sent = tools_sent(*numbered(2, strings(12)))

    assert [len(entry["input_schema"]["properties"]) for entry in sent] == [12, 12]


def test_a_25th_optional_parameter_across_strict_tools_is_refused_naming_each_tools_share() -> None:
    tools = [*numbered(1, strings(12)), *numbered(1, strings(13), prefix="s")]

    with pytest.raises(InvalidRequestError, match=re.escape("has 25 (t0: 12, s0: 13) optional")):
        tools_sent(*tools)


def test_required_parameters_do_not_count_as_optional() -> None:
    [sent] = tools_sent(*numbered(1, strings(30), required=True))

    assert len(sent["input_schema"]["required"]) == 30


def test_a_17th_union_typed_parameter_is_refused_and_16_are_sent() -> None:
    sixteen = {f"u{i}": UNION for i in range(15)} | {"listed": {"type": ["integer", "null"]}}

    [sent] = tools_sent(*numbered(1, sixteen, required=True))
    assert len(sent["input_schema"]["properties"]) == 16
    seventeen = numbered(1, sixteen | {"u15": UNION}, required=True)
    with pytest.raises(InvalidRequestError, match=re.escape("has 17 (t0: 17) parameters of a")):
        tools_sent(*seventeen)


def test_the_provider_takes_strict_tools() -> None:
    assert AnthropicProvider.takes_strict_tools is True


ROUTE_INPUT = {"name": "Fjords", "stops": [{"city": "Bergen", "nights": 2}, {"city": "Oslo"}]}
ROUTE_RESULT = "Fjords: Bergen (2), Oslo (1) [None]"


async def test_a_strict_turn_runs_the_tool_on_the_models_input_and_completes() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "plan_route", "input": ROUTE_INPUT}
    api = FakeApi(
        reply(message_json([call], stop_reason="tool_use")),
        reply(message_json([{"type": "text", "text": "Planned."}])),
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(api))
    provider = AnthropicProvider("claude-haiku-4-5", api_key=API_KEY, client=client)
    turn = NeuronTurn(provider, tools=[FunctionTool(plan_route, strict=True)])

    output = await turn.execute(TurnInput(message="Plan the fjords.", trigger="user"))

    assert turn.output_value(output) == "Planned." and output.exit_reason == "complete"
    assert api.bodies[0]["tools"][0]["strict"] is True
    [result] = [b for b in api.bodies[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == ROUTE_RESULT and result["is_error"] is False
    await client.aclose()


def streamed(*events: dict[str, Any]) -> Any:
    return reply(sse(*events), headers={"content-type": "text/event-stream"})


async def test_a_streamed_strict_turn_runs_the_tool_on_the_models_input_and_completes() -> None:
    arguments = json.dumps(ROUTE_INPUT)
    api = FakeApi(
        streamed(
            START,
            block_start(
                0, {"type": "tool_use", "id": "toolu_1", "name": "plan_route", "input": {}}
            ),
            delta(0, type="input_json_delta", partial_json=arguments[:20]),
            delta(0, type="input_json_delta", partial_json=arguments[20:]),
            stop(0),
            message_delta("tool_use", output_tokens=20),
            END,
        ),
        streamed(
            START,
            block_start(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="Planned."),
            stop(0),
            message_delta("end_turn", output_tokens=3),
            END,
        ),
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(api))
    provider = AnthropicProvider("claude-haiku-4-5", api_key=API_KEY, client=client)
    turn = NeuronTurn(provider, tools=[FunctionTool(plan_route, strict=True)])

    async with turn.stream(TurnInput(message="Plan the fjords.", trigger="user")) as events:
        async for _ in events:
            pass

    assert turn.output_value(events.output) == "Planned."
    assert events.output.exit_reason == "complete"
    assert all(body["stream"] is True for body in api.bodies)
    assert api.bodies[0]["tools"][0]["strict"] is True
    [result] = [b for b in api.bodies[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == ROUTE_RESULT
    await client.aclose()


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_SCHEMA_KEYS, _SCHEMAS, max_size=6))
@example({"properties": {"x": {"type": "string", "format": []}}})  # crashed: found by review
def test_any_strict_tools_schema_is_sent_in_the_subset_or_refused_never_a_crash(
    schema: dict[str, Any],
) -> None:
    # An MCP server's schema is untrusted: nothing but the provider's refusal may come out.
    tool = ToolSchema(
        name="t", description="d", input_schema={"type": "object", **schema}, strict=True
    )
    try:
        sent = tools_sent(tool)
    except InvalidRequestError as exc:
        assert "tool 't' cannot be strict" in str(exc) or "the request has" in str(exc)
        return
    json.dumps(sent)
