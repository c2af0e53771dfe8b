"""Strict tools on OpenAI's two APIs and the vendor presets: sent in OpenAI's strict subset with
`strict: true`, the nulls the model must send for optional parameters dropped from its calls,
and refused before any request where there is no strict form or no strict mode."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from layer0 import NonRetryableError, TurnInput
from neuron_provider_openai import _base, _wire
from neuron_provider_openai.presets import PRESETS
from neuron_tool import FunctionTool, ToolSchema, tool
from neuron_turn import NeuronTurn, UnsupportedStrictToolsError
from neuron_turn.loop.events import ToolCallDelta
from neuron_turn.loop.provider import ProviderRequest, ProviderResponse, ToolUsePart
from neuron_turn.loop.provider_errors import InvalidRequestError

from ._responses_support import function_call, message, response, sse
from ._support import (
    completion,
    json_response,
    provider_class,
    request,
    strict_forms_written,
    tool_call,
)
from ._support import named_provider as provider
from .test_responses_streaming import CREATED, call_events, text_events
from .test_streaming import DONE, USAGE, call_chunk, chunk

# provider -> whether it sends strict tools in strict mode; a preset only where its vendor
# documents OpenAI's strict mode for function tools (cited in presets.py).
TAKES_STRICT: dict[str, bool] = {
    "openai": True,
    "openai-responses": True,
    "groq": False,
    "deepseek": False,
    "openrouter": False,
    "mistral": False,
    "xai": False,
    "together": False,
    "fireworks": False,
    "cerebras": True,
}
WITHOUT_STRICT = [name for name, takes in TAKES_STRICT.items() if not takes]


class Stop(BaseModel):
    """A stop on a route."""

    city: str
    nights: int = 1


def plan_route(name: str, stops: list[Stop], pace: str = "slow") -> str:
    """Plan a named route through its stops."""
    return name


def weather_tool(seen: list[tuple[str, str]]) -> FunctionTool:
    """A strict `get_weather` whose `unit` has a default; each call's input goes in `seen`."""

    @tool(strict=True)
    def get_weather(city: str, unit: str = "celsius") -> str:
        """Return the current weather in a city."""
        seen.append((city, unit))
        return f"18 degrees {unit} in {city}"

    return get_weather


def loose_weather_tool() -> FunctionTool:
    """The weather tool, not strict."""

    @tool
    def get_weather(city: str, unit: str = "celsius") -> str:
        """Return the current weather in a city."""
        return city

    return get_weather


@tool(strict=True)
def tally(label: str, counts: dict[str, int]) -> int:
    """Add up counts by name."""
    return sum(counts.values())


def schema_of(function_tool: FunctionTool, **changed: Any) -> ToolSchema:
    """The schema the registry would offer for `function_tool`, with `changed` fields."""
    schema = ToolSchema(
        name=function_tool.name,
        description=function_tool.description,
        input_schema=function_tool.input_schema,
        strict=function_tool.strict,
    )
    return schema.model_copy(update=changed)


def streamed(*lines: str) -> httpx.Response:
    return httpx.Response(
        200, content="".join(lines).encode(), headers={"content-type": "text/event-stream"}
    )


ROUTE = FunctionTool(plan_route, strict=True)
NULL_UNIT = '{"city":"Paris","unit":null}'


# --- the body ---------------------------------------------------------------------


def test_a_strict_tool_goes_to_chat_closed_with_optional_parameters_required_and_nullable() -> None:
    built, _ = provider("openai")

    [sent] = built.request_body(request(tools=[schema_of(ROUTE)]))["tools"]

    function = sent["function"]
    assert list(function) == ["name", "description", "parameters", "strict"]
    assert function["strict"] is True
    schema = function["parameters"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["name", "stops", "pace"]
    assert {"type": "null"} in schema["properties"]["pace"]["anyOf"]
    stop = schema["$defs"]["Stop"]
    assert stop["additionalProperties"] is False and stop["required"] == ["city", "nights"]
    assert {"type": "null"} in stop["properties"]["nights"]["anyOf"]


def test_a_strict_tools_own_schema_is_left_as_it_was() -> None:
    strict = schema_of(ROUTE)
    before = json.dumps(strict.input_schema)

    provider("openai")[0].request_body(request(tools=[strict]))
    provider("openai-responses")[0].request_body(request(tools=[strict]))

    assert json.dumps(strict.input_schema) == before and '"required": ["name", "stops"]' in before


@pytest.mark.parametrize("strict", [None, False])
def test_a_tool_not_strict_goes_to_chat_as_before_without_a_strict_key(
    strict: bool | None,
) -> None:
    loose = schema_of(ROUTE, strict=strict)

    [sent] = provider("openai")[0].request_body(request(tools=[loose]))["tools"]

    assert sent == {
        "type": "function",
        "function": {
            "name": "plan_route",
            "description": loose.description,
            "parameters": loose.input_schema,
        },
    }


def test_a_strict_tool_goes_to_the_responses_api_in_its_strict_form_with_strict_true() -> None:
    [sent] = provider("openai-responses")[0].request_body(request(tools=[schema_of(ROUTE)]))[
        "tools"
    ]

    assert list(sent) == ["type", "name", "description", "parameters", "strict"]
    assert sent["strict"] is True
    assert sent["parameters"]["required"] == ["name", "stops", "pace"]
    assert sent["parameters"]["additionalProperties"] is False
    assert {"type": "null"} in sent["parameters"]["properties"]["pace"]["anyOf"]


@pytest.mark.parametrize("strict", [None, False])
def test_a_tool_not_strict_goes_to_the_responses_api_with_strict_false_and_its_own_schema(
    strict: bool | None,
) -> None:
    loose = schema_of(ROUTE, strict=strict)

    [sent] = provider("openai-responses")[0].request_body(request(tools=[loose]))["tools"]

    assert sent == {
        "type": "function",
        "name": "plan_route",
        "description": loose.description,
        "parameters": loose.input_schema,
        "strict": False,
    }


@pytest.mark.parametrize("name", ["openai", "openai-responses"])
def test_only_the_strict_tools_of_a_request_are_sent_strict(name: str) -> None:
    tools = [schema_of(ROUTE, strict=False), schema_of(weather_tool([]))]

    sent = provider(name)[0].request_body(request(tools=tools))["tools"]

    entries = [entry.get("function", entry) for entry in sent]
    assert [entry.get("strict") in (None, False) for entry in entries] == [True, False]


# --- the answer read back -------------------------------------------------------------


async def test_a_chat_turn_hands_a_strict_tool_its_default_for_the_null_the_model_sent() -> None:
    seen: list[tuple[str, str]] = []
    called = completion(
        None, finish_reason="tool_calls", tool_calls=[tool_call("call_1", "get_weather", NULL_UNIT)]
    )
    built, recorder = provider(
        "openai", json_response(called), json_response(completion("18 C in Paris."))
    )
    turn = NeuronTurn(built, tools=[weather_tool(seen)])

    output = await turn.execute(TurnInput(message="Weather in Paris?", trigger="user"))

    assert turn.output_value(output) == "18 C in Paris."
    assert seen == [("Paris", "celsius")]
    first, second = (json.loads(sent.content) for sent in recorder.requests)
    assert first["tools"][0]["function"]["strict"] is True
    # The history holds the input the tool got, not the null the model was made to send.
    [asked] = [m for m in second["messages"] if m["role"] == "assistant"]
    assert json.loads(asked["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


async def test_a_responses_turn_hands_a_strict_tool_its_default_for_the_null_the_model_sent() -> (
    None
):
    seen: list[tuple[str, str]] = []
    built, recorder = provider(
        "openai-responses",
        json_response(response(function_call("call_1", "get_weather", NULL_UNIT))),
        json_response(response(message("18 C in Paris."))),
    )
    turn = NeuronTurn(built, tools=[weather_tool(seen)])

    output = await turn.execute(TurnInput(message="Weather in Paris?", trigger="user"))

    assert turn.output_value(output) == "18 C in Paris."
    assert seen == [("Paris", "celsius")]
    first, second = (json.loads(sent.content) for sent in recorder.requests)
    assert first["tools"][0]["strict"] is True
    [asked] = [item for item in second["input"] if item.get("type") == "function_call"]
    assert json.loads(asked["arguments"]) == {"city": "Paris"}


async def stream_turn(turn: NeuronTurn[Any]) -> Any:
    async with turn.stream(TurnInput(message="Weather in Paris?", trigger="user")) as events:
        async for _ in events:
            pass
    return turn.output_value(events.output)


async def test_a_streamed_chat_turn_hands_a_strict_tool_its_default() -> None:
    seen: list[tuple[str, str]] = []
    called = streamed(
        chunk({"role": "assistant", "content": None}),
        call_chunk(0, id="call_1", name="get_weather", args='{"city":"Paris",'),
        call_chunk(0, args='"unit":null}'),
        chunk({}, finish="tool_calls"),
        USAGE,
        DONE,
    )
    answered = streamed(chunk({"content": "18 C in Paris."}), chunk({}, finish="stop"), DONE)
    built, recorder = provider("openai", called, answered)
    turn = NeuronTurn(built, tools=[weather_tool(seen)])

    assert await stream_turn(turn) == "18 C in Paris."

    assert seen == [("Paris", "celsius")]
    first, second = (json.loads(sent.content) for sent in recorder.requests)
    assert first["stream"] is True and first["tools"][0]["function"]["strict"] is True
    [asked] = [m for m in second["messages"] if m["role"] == "assistant"]
    assert json.loads(asked["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


async def test_a_streamed_responses_turn_hands_a_strict_tool_its_default() -> None:
    seen: list[tuple[str, str]] = []
    done = {
        "type": "response.completed",
        "response": response(function_call("call_1", "get_weather", NULL_UNIT, item_id="fc_0")),
    }
    called = sse(CREATED, *call_events(0, "call_1", '{"city":"Paris",', '"unit":null}'), done)
    text = {"type": "response.completed", "response": response(message("18 C in Paris."))}
    answered = sse(CREATED, *text_events("18 C in Paris."), text)
    built, recorder = provider("openai-responses", called, answered)
    turn = NeuronTurn(built, tools=[weather_tool(seen)])

    assert await stream_turn(turn) == "18 C in Paris."

    assert seen == [("Paris", "celsius")]
    first, second = (json.loads(sent.content) for sent in recorder.requests)
    assert first["stream"] is True and first["tools"][0]["strict"] is True
    [asked] = [item for item in second["input"] if item.get("type") == "function_call"]
    assert json.loads(asked["arguments"]) == {"city": "Paris"}


async def test_only_a_strict_tools_call_loses_its_nulls() -> None:
    loose = schema_of(weather_tool([]), strict=False, name="loose")
    calls = [tool_call("c1", "get_weather", NULL_UNIT), tool_call("c2", "loose", NULL_UNIT)]
    answer = completion(None, finish_reason="tool_calls", tool_calls=calls)
    built, _ = provider("openai", json_response(answer))

    got = await built.complete(request(tools=[schema_of(weather_tool([])), loose]))

    assert got.content == [
        ToolUsePart("c1", "get_weather", {"city": "Paris"}),
        ToolUsePart("c2", "loose", {"city": "Paris", "unit": None}),
    ]


async def test_a_streamed_answers_final_response_is_restored_and_its_deltas_are_as_sent() -> None:
    called = streamed(
        call_chunk(0, id="call_1", name="get_weather", args=NULL_UNIT),
        chunk({}, finish="tool_calls"),
        DONE,
    )
    built, _ = provider("openai", called)

    events = [e async for e in built.stream(request(tools=[schema_of(weather_tool([]))]))]

    *deltas, final = events
    assert isinstance(final, ProviderResponse)
    assert final.content == [ToolUsePart("call_1", "get_weather", {"city": "Paris"})]
    assert "".join(d.arguments for d in deltas if isinstance(d, ToolCallDelta)) == NULL_UNIT


# --- computed once, and only for strict tools ---------------------------------------------


@pytest.mark.parametrize("name", ["openai", "openai-responses"])
async def test_a_strict_tools_form_is_written_once_for_every_call_that_offers_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = strict_forms_written(monkeypatch)
    answer = (
        completion(None, tool_calls=[tool_call("c1", "get_weather", NULL_UNIT)])
        if name == "openai"
        else response(function_call("c1", "get_weather", NULL_UNIT))
    )
    built, recorder = provider(name, json_response(answer), json_response(answer))
    tools = [schema_of(weather_tool([]))]

    got = [await built.complete(request(tools=tools)) for _ in range(2)]

    assert written == ["get_weather"]  # body and answer, both calls: one form
    assert [reply.content for reply in got] == [
        [ToolUsePart("c1", "get_weather", {"city": "Paris"})]
    ] * 2
    assert "anyOf" in json.dumps(recorder.body["tools"])


@pytest.mark.parametrize("name", ["openai", "openai-responses"])
async def test_a_call_without_strict_tools_writes_no_strict_form_and_reads_nothing_back(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("strict work on a call without strict tools")

    monkeypatch.setattr(_wire, "strict_form", refused)
    monkeypatch.setattr(_base, "restore_calls", refused)
    answer = (
        completion(None, tool_calls=[tool_call("c1", "get_weather", NULL_UNIT)])
        if name == "openai"
        else response(function_call("c1", "get_weather", NULL_UNIT))
    )
    built, _ = provider(name, json_response(answer))
    loose = schema_of(weather_tool([]), strict=False)

    got = await built.complete(request(tools=[loose]))

    assert got.content == [ToolUsePart("c1", "get_weather", {"city": "Paris", "unit": None})]


async def test_concurrent_strict_calls_on_one_provider_each_send_and_read_their_own_tool() -> None:
    def answer(sent: httpx.Request) -> httpx.Response:
        name = json.loads(sent.content)["tools"][0]["function"]["name"]
        arguments = NULL_UNIT if name == "get_weather" else '{"name":"R","stops":[],"pace":null}'
        return json_response(completion(None, tool_calls=[tool_call("c", name, arguments)]))

    built, recorder = provider("openai")
    recorder.responses = [answer]
    weather = request(tools=[schema_of(weather_tool([]))])
    route = request(tools=[schema_of(ROUTE)])

    got = await asyncio.gather(*(built.complete(r) for r in (weather, route, weather, route)))

    assert [part.input for reply in got for part in reply.content] == [
        {"city": "Paris"},
        {"name": "R", "stops": []},
    ] * 2
    sent = [json.loads(r.content)["tools"][0]["function"] for r in recorder.requests]
    assert [(f["name"], f["strict"]) for f in sent] == [
        ("get_weather", True),
        ("plan_route", True),
    ] * 2


# --- refused before any request ---------------------------------------------------------


@pytest.mark.parametrize("name", ["openai", "openai-responses", "cerebras"])
async def test_a_strict_tool_of_free_keys_is_refused_naming_the_path_and_nothing_is_sent(
    name: str,
) -> None:
    built, recorder = provider(name)
    req = request(tools=[schema_of(tally)])

    with pytest.raises(InvalidRequestError, match="tool 'tally' cannot be strict") as caught:
        await built.complete(req)

    assert "input schema at $.counts is an object of free keys" in str(caught.value)
    assert caught.value.provider == name and caught.value.retryable is False
    with pytest.raises(InvalidRequestError, match=r"\$\.counts"):
        async for _ in built.stream(req):
            pass
    with pytest.raises(InvalidRequestError, match=r"\$\.counts"):
        built.request_body(req)
    assert recorder.requests == []


async def test_a_turn_with_a_strict_tool_of_free_keys_fails_before_any_request() -> None:
    built, recorder = provider("openai")
    turn = NeuronTurn(built, tools=[tally])

    with pytest.raises(NonRetryableError, match=r"tool 'tally' cannot be strict.*\$\.counts"):
        await turn.execute(TurnInput(message="Tally these", trigger="user"))

    assert recorder.requests == []


# --- the presets ------------------------------------------------------------------------


def test_the_table_covers_every_preset() -> None:
    assert set(TAKES_STRICT) == {"openai", "openai-responses"} | {p.name for p in PRESETS}


@pytest.mark.parametrize(("name", "takes"), TAKES_STRICT.items())
def test_each_provider_takes_strict_tools_only_where_its_api_documents_them(
    name: str, takes: bool
) -> None:
    built, _ = provider(name)

    assert provider_class(name).takes_strict_tools is takes
    assert getattr(built, "takes_strict_tools", None) is takes


def test_a_preset_with_strict_mode_sends_a_strict_tool_strict() -> None:
    built, _ = provider("cerebras")

    [sent] = built.request_body(request(tools=[schema_of(weather_tool([]))]))["tools"]

    assert sent["function"]["strict"] is True
    assert sent["function"]["parameters"]["required"] == ["city", "unit"]


@pytest.mark.parametrize("name", WITHOUT_STRICT)
def test_a_preset_without_strict_mode_refuses_a_strict_tool_when_the_turn_is_made(
    name: str,
) -> None:
    built, _ = provider(name)

    with pytest.raises(UnsupportedStrictToolsError, match="get_weather"):
        NeuronTurn(built, tools=[weather_tool([])])
    # What is refused is strict mode, not the tool.
    NeuronTurn(built, tools=[loose_weather_tool()])


@pytest.mark.parametrize("name", WITHOUT_STRICT)
async def test_a_preset_without_strict_mode_refuses_a_strict_request_built_by_hand(
    name: str,
) -> None:
    built, recorder = provider(name)
    req: ProviderRequest = request(tools=[schema_of(weather_tool([]))])

    with pytest.raises(InvalidRequestError, match=r"no documented strict mode.*get_weather"):
        await built.complete(req)
    with pytest.raises(InvalidRequestError, match="no documented strict mode"):
        async for _ in built.stream(req):
            pass
    assert recorder.requests == []
