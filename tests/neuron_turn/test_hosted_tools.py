"""Hosted tools: checked when made, refused over a provider without them, sent per call."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layer0 import TurnConfig
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    CodeExecution,
    HostedMCP,
    HostedTool,
    HostedToolCall,
    ImageGeneration,
    ModelCallDone,
    NeuronTurn,
    NeuronTurnConfig,
    UnsupportedHostedToolError,
    UserLocation,
    WebFetch,
    WebSearch,
    event_from_json,
    event_json,
)
from neuron_turn.loop.hosted_tools import hosted_tool_from_json, hosted_tool_json
from neuron_turn.loop.http_errors import redact_response
from neuron_turn.loop.provider import TokenUsage
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, json_values


@tool
def web_search(query: str) -> str:
    """A function tool that would shadow the hosted one."""
    return query


def _turn(provider: Any, *hosted: Any, **turn: Any) -> NeuronTurn:
    config = NeuronTurnConfig(model="m", hosted_tools=list(hosted))
    return NeuronTurn(provider, config=config, **turn)


async def test_each_model_call_offers_the_turns_hosted_tools() -> None:
    provider = ScriptedProvider([answer("found")], hosted_tools=["web_search", "code_execution"])
    search = WebSearch(max_uses=2, allowed_domains=["example.com"])
    turn = _turn(provider, search, CodeExecution())

    output = await turn.execute(ask("search"))

    assert output.exit_reason == "complete"
    assert tuple(provider.requests[0].hosted_tools) == (search, CodeExecution())


async def test_a_calls_allowed_tools_leave_out_the_hosted_tools_they_do_not_name() -> None:
    provider = ScriptedProvider(
        [answer("a"), answer("b")], hosted_tools=["web_search", "web_fetch"]
    )
    turn = _turn(provider, WebSearch(), WebFetch())

    await turn.execute(ask(config=TurnConfig(allowed_tools=["web_fetch"])))
    await turn.execute(ask(config=TurnConfig(allowed_tools=[])))

    assert tuple(provider.requests[0].hosted_tools) == (WebFetch(),)
    assert tuple(provider.requests[1].hosted_tools) == ()


def test_a_turn_over_a_provider_without_the_hosted_tool_is_refused_when_made() -> None:
    provider = ScriptedProvider([], hosted_tools=["web_search"])
    with pytest.raises(UnsupportedHostedToolError) as refused:
        _turn(provider, WebSearch(), CodeExecution())
    assert str(refused.value) == (
        "the provider ScriptedProvider does not run the hosted tool(s) code_execution "
        "(it runs: web_search)"
    )


def test_a_provider_that_lists_no_hosted_tools_runs_none() -> None:
    class Plain:
        async def complete(self, request: Any) -> Any:
            raise AssertionError("never called")

    with pytest.raises(UnsupportedHostedToolError, match=r"web_search \(it runs: none\)"):
        _turn(Plain(), WebSearch())


def test_a_function_tool_may_not_take_a_hosted_tools_name() -> None:
    provider = ScriptedProvider([], hosted_tools=["web_search"])
    with pytest.raises(UnsupportedHostedToolError, match="function tool is named web_search"):
        _turn(provider, WebSearch(), tools=ToolRegistry([web_search]))


def test_without_hosted_tools_a_function_tool_may_be_named_web_search() -> None:
    NeuronTurn(ScriptedProvider([]), tools=[web_search])


@pytest.mark.parametrize(
    ("make", "complaint"),
    [
        (lambda: WebSearch(max_uses=0), "WebSearch.max_uses must be an int of 1 or more; got 0"),
        (lambda: WebFetch(max_uses=True), "WebFetch.max_uses must be an int of 1 or more"),
        (lambda: WebSearch(allowed_domains="example.com"), "not the string 'example.com'"),
        (lambda: WebSearch(allowed_domains=["https://a.com"]), "'https://a.com' is not a domain"),
        (lambda: WebFetch(blocked_domains=["a b.com"]), "'a b.com' is not a domain"),
        (lambda: WebSearch(allowed_domains=[""]), "must be a non-empty string"),
        (lambda: WebSearch(allowed_domains=[3]), "must be a non-empty string"),
        (lambda: WebSearch(allowed_domains=["a.com"] * 101), "holds 101 domains; at most 100"),
        (
            lambda: WebSearch(allowed_domains=["a.com"], blocked_domains=["b.com"]),
            "allowed_domains or blocked_domains, not both",
        ),
        (lambda: UserLocation(country="France"), "two-letter ISO code such as 'US'"),
        (lambda: UserLocation(city=""), "UserLocation.city must be a non-empty string"),
        (lambda: WebSearch(user_location={"city": "x"}), "must be a UserLocation; got dict"),
        (lambda: NeuronTurnConfig(hosted_tools=WebSearch()), "put the single tool in a list"),
        (lambda: NeuronTurnConfig(hosted_tools=["web_search"]), "got str"),
        (lambda: NeuronTurnConfig(hosted_tools=[WebSearch(), WebSearch()]), "two web_search"),
        (lambda: HostedMCP("my docs", "https://a.com/mcp"), "HostedMCP.label is 1-64 of"),
        (lambda: HostedMCP("d" * 65, "https://a.com/mcp"), "HostedMCP.label is 1-64 of"),
        (lambda: HostedMCP("docs", "http://a.com/mcp"), "the server's https:// address"),
        (lambda: HostedMCP("docs", "https://a.com/m cp"), "the server's https:// address"),
        (lambda: HostedMCP("docs", "https://a.com", allowed_tools="ask"), "not the string 'ask'"),
        (lambda: HostedMCP("docs", "https://a.com", allowed_tools=[""]), "non-empty string"),
        (lambda: HostedMCP("docs", "https://a.com", authorization=" "), "a non-empty string"),
        (
            lambda: NeuronTurnConfig(
                hosted_tools=[
                    HostedMCP("docs", "https://a.com"),
                    HostedMCP("docs", "https://b.com"),
                ]
            ),
            "two mcp server 'docs' tools",
        ),
    ],
)
def test_a_malformed_hosted_tool_is_refused_naming_what_is_wrong(make: Any, complaint: str) -> None:
    with pytest.raises(UnsupportedHostedToolError) as refused:
        make()
    assert complaint in str(refused.value)


def test_hosted_tools_keep_their_domains_as_tuples() -> None:
    domains = ["example.com"]
    search = WebSearch(allowed_domains=domains)
    domains.append("evil.example")
    assert search.allowed_domains == ("example.com",)
    assert NeuronTurnConfig(hosted_tools=[search]).hosted_tools == (search,)


async def test_a_model_calls_hosted_calls_reach_its_done_event_and_its_json() -> None:
    searched = (HostedToolCall("web_search", {"query": "layer0"}), HostedToolCall("web_fetch"))
    response = replace(answer("found"), hosted_calls=searched)
    provider = ScriptedProvider([response], hosted_tools=["web_search", "web_fetch"])
    turn = _turn(provider, WebSearch(), WebFetch())

    events = [event async for event in turn.stream(ask("search"))]

    (done,) = [e for e in events if isinstance(e, ModelCallDone)]
    assert done.hosted_calls == searched
    data = event_json(done)
    assert data["hosted_calls"] == [
        {"name": "web_search", "input": {"query": "layer0"}},
        {"name": "web_fetch", "input": None},
    ]
    assert event_from_json(data) == done


async def test_a_model_call_without_hosted_calls_writes_none_in_its_json() -> None:
    turn = _turn(ScriptedProvider([answer("plain")]))
    events = [event async for event in turn.stream(ask())]
    (done,) = [e for e in events if isinstance(e, ModelCallDone)]
    assert "hosted_calls" not in event_json(done)


def test_an_echoed_key_in_a_hosted_calls_input_is_redacted() -> None:
    key = "sk-ant-api03-SECRET-0123456789"
    call = HostedToolCall("web_search", {"query": f"who owns {key}"})
    response = replace(answer("no"), hosted_calls=(call,))

    cleaned = redact_response(response, [key])

    assert cleaned.hosted_calls == (HostedToolCall("web_search", {"query": "who owns [REDACTED]"}),)
    assert redact_response(response, ["not-in-it"]) is response


@pytest.mark.parametrize("bad", [{"name": 3}, "web_search", [{"input": {}}]])
def test_a_done_events_malformed_hosted_calls_are_refused_naming_them(bad: Any) -> None:
    data = event_json(ModelCallDone(1, "m", "end_turn", TokenUsage(1, 1), None))
    data["hosted_calls"] = bad if isinstance(bad, list) else [bad]
    with pytest.raises(ValueError, match="hosted_calls"):
        event_from_json(data)


@pytest.mark.parametrize(
    "tool",
    [
        WebSearch(),
        WebSearch(
            max_uses=4,
            blocked_domains=["ads.example"],
            user_location=UserLocation(city="Lyon", country="FR", timezone="Europe/Paris"),
        ),
        WebFetch(max_uses=1, allowed_domains=["docs.python.org/3"]),
        CodeExecution(),
        HostedMCP("docs", "https://mcp.example.com/mcp"),
        HostedMCP("wiki", "https://mcp.example.com/wiki", allowed_tools=["ask", "read_page"]),
        HostedMCP("docs", "https://mcp.example.com/mcp", require_approval=["delete"]),
        ImageGeneration(),
        ImageGeneration(aspect_ratio="16:9", image_size="2K"),
    ],
)
def test_a_hosted_tool_survives_its_json_form(tool: HostedTool) -> None:
    data = json.loads(json.dumps(hosted_tool_json(tool)))
    assert data["name"] == tool.name
    assert hosted_tool_from_json(data) == tool


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ({"name": "web_browse"}, "unknown hosted tool 'web_browse'; known: web_search"),
        ({"max_uses": 1}, "unknown hosted tool None"),
        (["web_search"], "an object with a name; got list"),
        ({"name": "web_fetch", "user_location": {}}, "web_fetch has no field 'user_location'"),
        ({"name": "web_search", "allowed_domains": 5}, "allowed_domains is a list of domains"),
        ({"name": "web_search", "user_location": {"planet": "Mars"}}, "user_location is an object"),
        ({"name": "web_search", "user_location": {"country": "France"}}, "two-letter"),
        ({"name": "web_fetch", "max_uses": True}, "max_uses must be an int"),
        ({"name": "mcp"}, "hosted tool mcp needs label and url"),
        ({"name": "mcp", "label": "d", "url": "https://a.com", "authorization": "t"}, "no field"),
        ({"name": "mcp", "label": "d", "url": "https://a.com", "allowed_tools": "a"}, "a list"),
        ({"name": "mcp", "label": 3, "url": "https://a.com"}, "HostedMCP.label is 1-64"),
        ({"name": "image_generation", "aspect_ratio": "wide"}, "width:height such as '16:9'"),
        ({"name": "image_generation", "aspect_ratio": "0:1"}, "width:height such as '16:9'"),
        ({"name": "image_generation", "image_size": "8K"}, "one of 1K, 2K, 4K; got '8K'"),
        ({"name": "image_generation", "size": "1024x1024"}, "has no field 'size'"),
    ],
)
def test_malformed_hosted_tool_json_is_refused_naming_what_is_wrong(
    data: Any, complaint: str
) -> None:
    with pytest.raises(UnsupportedHostedToolError, match=re.escape(complaint)):
        hosted_tool_from_json(data)


_JSON = json_values(8)
_FIELD = st.sampled_from(
    [
        "max_uses", "allowed_domains", "blocked_domains", "user_location", "city", "x",
        "label", "url", "allowed_tools", "require_approval", "aspect_ratio", "image_size",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(
        ["web_search", "web_fetch", "code_execution", "mcp", "image_generation", "nope"]
    )
    | _JSON,
    fields=st.dictionaries(_FIELD, _JSON, max_size=4),
)
def test_any_json_is_a_hosted_tool_or_the_error_naming_why_never_another_exception(
    name: Any, fields: dict[str, Any]
) -> None:
    try:
        tool = hosted_tool_from_json({"name": name, **fields})
    except UnsupportedHostedToolError as exc:
        assert str(exc)
    else:
        assert hosted_tool_from_json(hosted_tool_json(tool)) == tool


def test_an_mcp_servers_token_is_in_no_repr_and_never_written_as_json() -> None:
    server = HostedMCP("docs", "https://mcp.example.com/mcp", authorization="tok-SECRET-123")

    assert "tok-SECRET-123" not in repr(server)
    assert "tok-SECRET-123" not in repr(NeuronTurnConfig(hosted_tools=[server]))
    with pytest.raises(UnsupportedHostedToolError) as refused:
        hosted_tool_json(server)
    assert "'docs' has an authorization token" in str(refused.value)
    assert "tok-SECRET-123" not in str(refused.value)


def test_several_mcp_servers_may_be_granted_and_one_of_each_other_kind() -> None:
    config = NeuronTurnConfig(
        hosted_tools=[
            HostedMCP("docs", "https://a.com/mcp"),
            HostedMCP("wiki", "https://b.com/mcp", allowed_tools=("ask",)),
            WebSearch(),
        ]
    )

    assert [tool.name for tool in config.hosted_tools] == ["mcp", "mcp", "web_search"]


def test_a_turn_granting_an_mcp_server_needs_a_provider_that_runs_mcp() -> None:
    grant = NeuronTurnConfig(hosted_tools=[HostedMCP("docs", "https://a.com/mcp")])

    with pytest.raises(UnsupportedHostedToolError, match="does not run the hosted tool"):
        NeuronTurn(ScriptedProvider([], hosted_tools=["web_search"]), config=grant)
    NeuronTurn(ScriptedProvider([], hosted_tools=["mcp"]), config=grant)
