"""Remote MCP calls OpenAI asks about: the turn pauses, the decision goes back as the API's own."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layer0 import TurnInput, TurnOutput
from neuron_orch_local import LocalOrchestrator
from neuron_provider_anthropic import AnthropicProvider
from neuron_provider_openai import OpenAIResponsesProvider
from neuron_provider_openai._responses_wire import (
    MalformedResponseError,
    approval_request_to_wire,
    parse_response,
)
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    AWAITING_APPROVAL,
    Decision,
    HostedMCP,
    NeuronTurn,
    NeuronTurnConfig,
    PendingCall,
    ToolCallDelta,
    ToolCallStart,
    TurnDone,
    UnsupportedHostedToolError,
    pending_approvals,
    resume_input,
)
from neuron_turn.loop.provider import RawPart, TextPart, ToolUsePart
from neuron_turn.loop.provider_errors import ProviderResponseError

from ._responses_support import message, mocked, response, sse
from ._support import Recorder, json_response, request
from .test_responses_streaming import CREATED, collect

DOCS = HostedMCP(
    "docs",
    "https://docs.example.com/mcp",
    allowed_tools=["search_docs", "delete_page"],
    require_approval=["delete_page"],
)
LISTED: dict[str, Any] = {
    "type": "mcp_list_tools",
    "id": "mcpl_1",
    "server_label": "docs",
    "tools": [{"name": "delete_page", "input_schema": {"type": "object"}}],
    "error": None,
}
ASKED: dict[str, Any] = {
    "type": "mcp_approval_request",
    "id": "mcpr_1",
    "server_label": "docs",
    "name": "delete_page",
    "arguments": '{"page": 7}',
}
ASKED_CALL = ToolUsePart(
    "hosted:mcpr_1", "mcp", {"server": "docs", "tool": "delete_page", "arguments": {"page": 7}}
)
RAN: dict[str, Any] = {
    "type": "mcp_call",
    "id": "mcp_1",
    "status": "completed",
    "server_label": "docs",
    "name": "delete_page",
    "arguments": '{"page": 7}',
    "output": "deleted page 7",
    "error": None,
    "approval_request_id": "mcpr_1",
}


# --- the tool entry ----------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "sent"),
    [
        (HostedMCP("docs", "https://docs.example.com/mcp"), "never"),
        (HostedMCP("docs", "https://docs.example.com/mcp", require_approval=True), "always"),
        (
            HostedMCP("docs", "https://docs.example.com/mcp", require_approval=["delete_page"]),
            {"always": {"tool_names": ["delete_page"]}},
        ),
        (
            DOCS,
            {
                "always": {"tool_names": ["delete_page"]},
                "never": {"tool_names": ["search_docs"]},
            },
        ),
    ],
)
async def test_require_approval_is_sent_as_the_apis_own(server: HostedMCP, sent: object) -> None:
    provider, recorder = mocked()

    await provider.complete(request(hosted_tools=[server]))

    assert recorder.body["tools"][0]["require_approval"] == sent


# --- the answer --------------------------------------------------------------


async def test_an_approval_request_is_a_call_named_mcp_with_the_server_tool_and_arguments() -> None:
    provider, _ = mocked(json_response(response(LISTED, ASKED)))

    answer = await provider.complete(request(hosted_tools=[DOCS]))

    assert answer.content == [ASKED_CALL]
    assert answer.stop_reason == "tool_use"


async def test_a_streamed_approval_request_is_the_same_call_streamed_as_it_arrives() -> None:
    done = {"type": "response.completed", "response": response(LISTED, ASKED)}
    item = {"type": "response.output_item.done", "output_index": 1, "item": ASKED}
    provider, _ = mocked(sse(CREATED, item, done))

    deltas, answer = await collect(provider, request(hosted_tools=[DOCS]))

    assert answer.content == [ASKED_CALL]
    assert deltas == [
        ToolCallStart("hosted:mcpr_1", "mcp"),
        ToolCallDelta(
            "hosted:mcpr_1", '{"server":"docs","tool":"delete_page","arguments":{"page":7}}'
        ),
    ]


async def test_a_malformed_streamed_request_is_not_streamed_and_the_answer_names_it() -> None:
    broken = {**ASKED, "name": None}
    done = {"type": "response.completed", "response": response(broken)}
    item = {"type": "response.output_item.done", "output_index": 0, "item": broken}
    provider, _ = mocked(sse(CREATED, item, done))
    seen: list[object] = []

    with pytest.raises(ProviderResponseError) as raised:
        async for event in provider.stream(request(hosted_tools=[DOCS])):
            seen.append(event)

    assert "'mcpr_1' names no tool" in str(raised.value)
    assert not any(isinstance(event, ToolCallStart) for event in seen)


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        ({**ASKED, "id": None}, "without an id or a server_label"),
        ({**ASKED, "server_label": 3}, "without an id or a server_label"),
        ({**ASKED, "name": None}, "'mcpr_1' names no tool"),
    ],
)
async def test_an_approval_request_no_decision_could_name_is_a_response_error(
    broken: dict[str, Any], says: str
) -> None:
    provider, _ = mocked(json_response(response(broken)))

    with pytest.raises(ProviderResponseError) as raised:
        await provider.complete(request(hosted_tools=[DOCS]))

    assert says in str(raised.value)


# --- a whole turn ------------------------------------------------------------


def _agent(store: SqliteStore, recorder_answers: list[Any]) -> tuple[LocalOrchestrator, Recorder]:
    provider, recorder = mocked(*recorder_answers)
    turn = NeuronTurn(provider, state=store, config=NeuronTurnConfig(hosted_tools=[DOCS]))
    return LocalOrchestrator({"docs": turn}, store), recorder


async def _paused_then(
    db: Path, decision: Decision, *later: Any
) -> tuple[TurnOutput, TurnOutput, Recorder]:
    answers = [json_response(response(LISTED, ASKED)), *later]
    async with SqliteStore(db) as store:
        orchestrator, recorder = _agent(store, answers)
        ask = TurnInput(message="Delete page 7", trigger="user", session="s")
        paused = await orchestrator.dispatch("docs", ask)
        done = await orchestrator.dispatch("docs", resume_input("s", [decision]))
    return paused, done, recorder


def _items(recorder: Recorder, call: int) -> list[dict[str, Any]]:
    return list(json.loads(recorder.requests[call].content)["input"])


async def test_a_turn_pauses_on_the_request_and_an_approval_goes_back_after_it(
    tmp_path: Path,
) -> None:
    ran = json_response(response(RAN, message("Page 7 is deleted.")))
    paused, done, recorder = await _paused_then(
        tmp_path / "s.db", Decision.approve("hosted:mcpr_1"), ran
    )

    assert paused.exit_reason == AWAITING_APPROVAL
    assert pending_approvals(paused) == [
        PendingCall(id="hosted:mcpr_1", name="mcp", input=ASKED_CALL.input, hosted=True)
    ]
    assert done.exit_reason == "complete"
    assert done.message.as_text() == "Page 7 is deleted."
    assert _items(recorder, 1)[1:] == [
        {
            "type": "mcp_approval_request",
            "id": "mcpr_1",
            "server_label": "docs",
            "name": "delete_page",
            "arguments": '{"page": 7}',
        },
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    ]


async def test_a_denial_goes_back_as_a_no_with_the_persons_reason(tmp_path: Path) -> None:
    declined = json_response(response(message("I left page 7 alone.")))
    _, done, recorder = await _paused_then(
        tmp_path / "s.db", Decision.deny("hosted:mcpr_1", "page 7 is still linked"), declined
    )

    assert done.message.as_text() == "I left page 7 alone."
    assert _items(recorder, 1)[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_1",
        "approve": False,
        "reason": "Denied by a person: page 7 is still linked",
    }


async def test_later_calls_send_the_request_the_decision_and_the_call_it_ran_in_order(
    tmp_path: Path,
) -> None:
    ran = json_response(response(RAN, message("Page 7 is deleted.")))
    later = json_response(response(message("Nothing else to delete.")))
    db = tmp_path / "s.db"
    _, _, _ = await _paused_then(db, Decision.approve("hosted:mcpr_1"), ran)
    async with SqliteStore(db) as store:
        orchestrator, recorder = _agent(store, [later])
        ask = TurnInput(message="Anything else?", trigger="user", session="s")
        await orchestrator.dispatch("docs", ask)

    kinds = [item.get("type") or item.get("role") for item in _items(recorder, 0)]
    assert kinds == [
        "user",
        "mcp_approval_request",
        "mcp_approval_response",
        "mcp_call",
        "assistant",
        "user",
    ]
    assert _items(recorder, 0)[3] == RAN


async def test_an_approved_calls_record_is_kept_in_the_answer_and_a_plain_call_is_not() -> None:
    plain = {**RAN, "approval_request_id": None}
    provider, _ = mocked(json_response(response(RAN, plain, message("ok"))))

    answer = await provider.complete(request(hosted_tools=[DOCS]))

    assert answer.content == [RawPart("openai-responses", RAN), TextPart("ok")]


def test_a_provider_that_cannot_pause_a_hosted_call_refuses_require_approval_when_made() -> None:
    anthropic = AnthropicProvider("claude-haiku-4-5", api_key="sk-ant-test")
    with pytest.raises(UnsupportedHostedToolError) as refused:
        NeuronTurn(anthropic, config=NeuronTurnConfig(hosted_tools=[DOCS]))
    assert "AnthropicProvider runs a remote MCP server's calls without asking" in str(refused.value)
    NeuronTurn(
        OpenAIResponsesProvider("gpt-5-mini", api_key="sk-test"),
        config=NeuronTurnConfig(hosted_tools=[DOCS]),
    )


async def test_a_streamed_turn_pauses_on_the_request_as_a_complete_one_does() -> None:
    done = {"type": "response.completed", "response": response(LISTED, ASKED)}
    item = {"type": "response.output_item.done", "output_index": 1, "item": ASKED}
    provider, _ = mocked(sse(CREATED, item, done))
    turn = NeuronTurn(provider, config=NeuronTurnConfig(hosted_tools=[DOCS]))

    events = [e async for e in turn.stream(TurnInput(message="Delete page 7", trigger="user"))]

    last = events[-1]
    assert isinstance(last, TurnDone)
    assert last.output.exit_reason == AWAITING_APPROVAL
    assert [c.id for c in pending_approvals(last.output) if c.hosted] == ["hosted:mcpr_1"]
    assert ToolCallStart("hosted:mcpr_1", "mcp") in events


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_ITEM = st.fixed_dictionaries(
    {"type": st.sampled_from(["mcp_approval_request", "mcp_call", "mcp_list_tools"])},
    optional={
        key: _JSON | st.text(max_size=12)
        for key in ("id", "server_label", "name", "arguments", "error", "approval_request_id")
    },
)


@settings(max_examples=300, deadline=None)
@given(items=st.lists(_ITEM, min_size=1, max_size=3))
def test_any_mcp_items_are_read_or_refused_naming_why_never_a_crash(
    items: list[dict[str, Any]],
) -> None:
    try:
        completion = parse_response(response(*items, message("ok")), fallback_model="m")
    except MalformedResponseError as exc:
        assert "mcp_approval_request" in str(exc)
        return
    for part in completion.content:
        if isinstance(part, ToolUsePart):
            # Each request read is sent back as the API's own item, whatever it held.
            assert approval_request_to_wire(part) is not None
    json.dumps([dataclasses.asdict(call) for call in completion.hosted_calls])


async def test_a_function_call_never_passes_for_a_request_by_its_id() -> None:
    posing = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "hosted:mcpr_1",
        "name": "mcp",
        "arguments": '{"server": "docs", "tool": "delete_page", "arguments": {"page": 7}}',
    }
    provider, _ = mocked(json_response(response(posing)))

    (call,) = (await provider.complete(request(hosted_tools=[DOCS]))).content

    assert isinstance(call, ToolUsePart) and call.name == "mcp"
    assert not call.id.startswith("hosted:")
    assert approval_request_to_wire(call) is None
