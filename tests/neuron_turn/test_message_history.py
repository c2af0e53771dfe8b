"""A conversation kept in code: `run(message_history=...)`, `all_messages()`, `decisions=`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import HISTORY_KEY, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import tool
from neuron_turn import (
    AWAITING_APPROVAL,
    DECISIONS_KEY,
    ApprovalPolicy,
    AwaitingApprovalError,
    Decision,
    MessageHistoryError,
    MissingDecisionError,
    NeuronTurn,
    NeuronTurnConfig,
    NotAwaitingApprovalError,
    ProviderMessage,
    RawPart,
    RunArgumentsError,
    SessionNotEmptyError,
    SlidingWindow,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    UnknownDecisionError,
    messages_from_json,
    messages_to_json,
    save_messages,
    session_messages,
)
from neuron_turn.loop.message_history import check_history
from neuron_turn.testing import ScriptedProvider

from .support import answer, call, calls

WRITTEN: list[str] = []


@tool
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"{city}: 21 C"


@tool
def write_file(path: str) -> str:
    """Write a file (pretend)."""
    WRITTEN.append(path)
    return f"wrote {path}"


class Weather(BaseModel):
    city: str
    celsius: int


def _texts(messages: list[ProviderMessage]) -> list[tuple[str, str]]:
    """Each message's role and its text parts joined (tool parts left out)."""
    return [
        (m.role, "".join(p.text for p in m.content if isinstance(p, TextPart))) for m in messages
    ]


async def test_a_second_run_goes_on_from_the_first_runs_messages_without_a_store() -> None:
    provider = ScriptedProvider([answer("Hello Ada."), answer("Your name is Ada.")])
    turn = NeuronTurn(provider)

    first = await turn.run("My name is Ada.")
    second = await turn.run("What is my name?", message_history=first.all_messages())

    sent = _texts(list(provider.requests[1].messages))
    assert sent == [
        ("user", "My name is Ada."),
        ("assistant", "Hello Ada."),
        ("user", "What is my name?"),
    ]
    assert _texts(second.all_messages()) == [*sent, ("assistant", "Your name is Ada.")]
    assert _texts(second.new_messages()) == [
        ("user", "What is my name?"),
        ("assistant", "Your name is Ada."),
    ]
    assert second.turn_output.effects == []  # no session: nothing for a store to write


async def test_all_messages_hold_the_tool_round_between_question_and_answer() -> None:
    provider = ScriptedProvider([calls(call("c1", "forecast", city="Oslo")), answer("21 C")])
    turn = NeuronTurn(provider, tools=[forecast])

    result = await turn.run("Weather in Oslo?")

    messages = result.all_messages()
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1].content == (ToolUsePart("c1", "forecast", {"city": "Oslo"}),)
    [answered] = messages[2].content
    assert isinstance(answered, ToolResultPart)
    assert (answered.tool_use_id, answered.content) == ("c1", "Oslo: 21 C")
    assert result.new_messages() == messages  # no history before it


async def test_the_json_of_all_messages_is_the_history_a_store_keeps() -> None:
    provider = ScriptedProvider([calls(call("c1", "forecast", city="Oslo")), answer("21 C")])
    store = InMemoryStore()
    turn = NeuronTurn(provider, tools=[forecast], state=store)
    orchestrator = LocalOrchestrator({"weather": turn}, store)
    await orchestrator.dispatch(
        "weather", TurnInput(message="Weather in Oslo?", trigger="user", session="s1")
    )
    stored = await store.read(SessionScope(id="s1"), HISTORY_KEY)

    provider = ScriptedProvider([calls(call("c1", "forecast", city="Oslo")), answer("21 C")])
    result = await NeuronTurn(provider, tools=[forecast]).run("Weather in Oslo?")

    assert json.loads(result.all_messages_json()) == stored
    assert messages_from_json(result.all_messages_json()) == result.all_messages()
    assert messages_from_json(json.dumps(stored)) == result.all_messages()


async def test_a_run_on_a_session_gives_the_stored_history_then_its_own_messages() -> None:
    store = InMemoryStore()
    provider = ScriptedProvider([answer("Hello Ada."), answer("Ada.")])
    turn = NeuronTurn(provider, state=store)
    orchestrator = LocalOrchestrator({"chat": turn}, store)
    await orchestrator.dispatch("chat", TurnInput(message="I am Ada.", trigger="user", session="s"))

    result = await turn.run("Who am I?", session="s")

    assert _texts(result.all_messages()) == [
        ("user", "I am Ada."),
        ("assistant", "Hello Ada."),
        ("user", "Who am I?"),
        ("assistant", "Ada."),
    ]
    assert json.loads(result.new_messages_json()) == [
        {"role": "user", "content": "Who am I?"},
        {"role": "assistant", "content": "Ada."},
    ]


async def test_a_compacting_turn_still_gives_every_message_of_the_conversation() -> None:
    history = [
        ProviderMessage("user" if i % 2 == 0 else "assistant", [TextPart(f"m{i}")])
        for i in range(10)
    ]
    provider = ScriptedProvider([answer("done")])
    turn = NeuronTurn(provider, context=SlidingWindow(max_messages=3))

    result = await turn.run("last", message_history=history)

    assert len(provider.requests[0].messages) < 11  # the model saw a window
    assert result.all_messages() == [
        *messages_from_json(messages_to_json(history)),
        *result.new_messages(),
    ]
    assert _texts(result.new_messages()) == [("user", "last"), ("assistant", "done")]


async def test_a_typed_run_goes_on_from_a_history_and_answers_in_its_type() -> None:
    history = [
        ProviderMessage("user", (TextPart("I live in Oslo."),)),
        ProviderMessage("assistant", (TextPart("Noted."),)),
    ]
    provider = ScriptedProvider([answer('{"city": "Oslo", "celsius": 21}')])

    result = await NeuronTurn(provider).run(
        "Weather where I live?", output_type=Weather, message_history=history
    )

    assert result.output == Weather(city="Oslo", celsius=21)
    assert result.all_messages()[:2] == history


def test_run_sync_takes_a_message_history_too() -> None:
    provider = ScriptedProvider([answer("Hi."), answer("Ada.")])
    turn = NeuronTurn(provider)

    first = turn.run_sync("I am Ada.")
    second = turn.run_sync("Who am I?", message_history=first.all_messages())

    assert second.output == "Ada."
    assert len(second.all_messages()) == 4


async def test_decisions_resume_a_run_paused_in_code_from_its_messages() -> None:
    WRITTEN.clear()
    provider = ScriptedProvider(
        [calls(call("w1", "write_file", path="/etc/motd")), answer("Written.")]
    )
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["write_file"]))
    turn = NeuronTurn(provider, tools=[write_file], config=config)

    paused = await turn.run("Write the motd")
    assert paused.exit_reason == AWAITING_APPROVAL and WRITTEN == []
    [waiting] = paused.pending

    done = await turn.run(
        decisions=[Decision.approve(waiting.id)], message_history=paused.all_messages()
    )

    assert done.output == "Written." and WRITTEN == ["/etc/motd"]
    messages = done.all_messages()
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    [result] = messages[2].content
    assert isinstance(result, ToolResultPart) and result.content == "wrote /etc/motd"
    assert done.new_messages() == messages[2:]  # a resume adds no user message


async def test_a_denied_call_answers_the_model_with_the_reason_in_code() -> None:
    WRITTEN.clear()
    provider = ScriptedProvider([calls(call("w1", "write_file", path="/x")), answer("Not done.")])
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["write_file"]))
    turn = NeuronTurn(provider, tools=[write_file], config=config)
    paused = await turn.run("Write /x")

    done = await turn.run(
        decisions=[Decision.deny("w1", "not today")], message_history=paused.all_messages()
    )

    assert done.output == "Not done." and WRITTEN == []
    [denied] = done.all_messages()[2].content
    assert isinstance(denied, ToolResultPart) and denied.is_error
    assert "not today" in str(denied.content)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"message": "hi", "session": "s", "message_history": []}, "not both"),
        ({}, "run needs a message, or decisions="),
        ({"message": "hi", "decisions": []}, "not a message"),
        ({"decisions": []}, "give its session= or its message_history="),
        (
            {"decisions": [], "message_history": [], "metadata": {DECISIONS_KEY: []}},
            "decisions are given twice",
        ),
        ({"decisions": [], "message_history": [], "metadata": [1]}, "must be an object"),
        ({"decisions": "w1", "message_history": []}, "a sequence of Decision"),
    ],
)
async def test_arguments_that_make_no_one_run_are_refused_before_any_model_call(
    arguments: dict[str, Any], words: str
) -> None:
    provider = ScriptedProvider([])
    with pytest.raises(RunArgumentsError, match=words):
        await NeuronTurn(provider).run(**arguments)
    assert provider.requests == []


@pytest.mark.parametrize(
    ("history", "words"),
    [
        ("hello", "a sequence of ProviderMessage.*not str"),
        ([{"role": "user", "content": "hi"}], r"message_history\[0\] is a dict"),
        ([ProviderMessage("system", [TextPart("be nice")])], "has the role 'system'"),
        ([ProviderMessage("user", "hi")], "content of type str"),  # type: ignore[arg-type]
        ([ProviderMessage("user", [TextPart("a")]), ProviderMessage("user", [7])], r"\[1\].*int"),  # type: ignore[list-item]
    ],
)
async def test_a_history_holding_what_is_no_message_is_refused_naming_it(
    history: Any, words: str
) -> None:
    provider = ScriptedProvider([])
    with pytest.raises(MessageHistoryError, match=words):
        await NeuronTurn(provider).run("hi", message_history=history)
    assert provider.requests == []


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ("not json", "is not JSON"),
        (b"\xff\xfe", "is not JSON"),
        ("[" * 100_000 + "]" * 100_000, "is not JSON"),
        ('{"role": "user"}', "does not parse"),
        ('[{"role": "tool", "content": "x"}]', "does not parse.*role"),
    ],
)
def test_json_that_is_no_message_history_is_refused_saying_why(
    data: str | bytes, words: str
) -> None:
    with pytest.raises(MessageHistoryError, match=words):
        messages_from_json(data)


def test_messages_to_json_refuses_what_it_could_not_read_back() -> None:
    with pytest.raises(MessageHistoryError, match="has the role 'system'"):
        messages_to_json([ProviderMessage("system", [TextPart("x")])])


async def test_decisions_for_a_history_waiting_on_nothing_are_refused() -> None:
    provider = ScriptedProvider([answer("Hi.")])
    turn = NeuronTurn(provider)
    first = await turn.run("Hello")

    with pytest.raises(NotAwaitingApprovalError, match="a message history that waits on no call"):
        await turn.run(decisions=[Decision.approve("c1")], message_history=first.all_messages())


async def test_a_decision_for_no_waiting_call_names_the_calls_of_the_history() -> None:
    provider = ScriptedProvider([calls(call("w1", "write_file", path="/x"))])
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["write_file"]))
    turn = NeuronTurn(provider, tools=[write_file], config=config)
    paused = await turn.run("Write /x")

    with pytest.raises(UnknownDecisionError, match="'w9' is not pending on the message history"):
        await turn.run(decisions=[Decision.approve("w9")], message_history=paused.all_messages())
    with pytest.raises(MissingDecisionError, match="the message history has pending call"):
        await turn.run(decisions=[], message_history=paused.all_messages())


async def test_a_stream_goes_on_from_a_history_and_gives_the_conversation_at_its_end() -> None:
    provider = ScriptedProvider([answer("Hello Ada."), answer("You are Ada.")])
    turn = NeuronTurn(provider)
    first = await turn.run("I am Ada.")

    events = turn.stream("Who am I?", message_history=first.all_messages())
    with pytest.raises(RuntimeError, match="read the stream to its end"):
        events.all_messages()
    kinds = [event.kind async for event in events]

    assert kinds[-1] == "turn_done"
    assert _texts(events.all_messages())[-2:] == [
        ("user", "Who am I?"),
        ("assistant", "You are Ada."),
    ]
    assert events.all_messages()[:2] == first.all_messages()
    assert len(provider.requests[1].messages) == 3
    assert _texts(events.new_messages()) == [("user", "Who am I?"), ("assistant", "You are Ada.")]


async def test_a_stream_refuses_a_history_beside_a_session() -> None:
    turn = NeuronTurn(ScriptedProvider([]))
    with pytest.raises(RunArgumentsError, match="not both"):
        turn.stream(TurnInput(message="hi", trigger="user", session="s"), message_history=[])
    with pytest.raises(MessageHistoryError, match=r"message_history\[0\] is a str"):
        turn.stream("hi", message_history=["hello"])  # type: ignore[list-item]


async def test_a_conversation_kept_in_code_is_saved_into_a_session_and_goes_on_there(
    tmp_path: Path,
) -> None:
    first = await NeuronTurn(ScriptedProvider([answer("Hello Ada.")])).run("I am Ada.")
    async with SqliteStore(tmp_path / "state.db") as store:
        length = await save_messages(store, "ada", first.all_messages())
        provider = ScriptedProvider([answer("You are Ada.")])
        turn = NeuronTurn(provider, state=store)
        orchestrator = LocalOrchestrator({"chat": turn}, store)
        await orchestrator.dispatch(
            "chat", TurnInput(message="Who am I?", trigger="user", session="ada")
        )
        kept = await session_messages(store, "ada")

    assert length == 2
    assert _texts(list(provider.requests[0].messages))[:2] == _texts(first.all_messages())
    assert kept[:2] == first.all_messages()
    assert _texts(kept[2:]) == [("user", "Who am I?"), ("assistant", "You are Ada.")]


async def test_saving_into_a_session_that_holds_a_history_writes_nothing() -> None:
    store = InMemoryStore()
    hello = [ProviderMessage("user", (TextPart("hello"),))]
    await save_messages(store, "s", hello)

    with pytest.raises(SessionNotEmptyError, match=r"'s' already holds a history.*nothing was"):
        await save_messages(store, "s", [ProviderMessage("user", (TextPart("other"),))])
    with pytest.raises(MessageHistoryError, match=r"message_history\[0\] is a dict"):
        await save_messages(store, "t", [{"role": "user", "content": "x"}])  # type: ignore[list-item]

    assert await session_messages(store, "s") == hello
    assert await session_messages(store, "t") == []


async def test_a_decision_given_always_in_code_holds_for_the_rest_of_that_run() -> None:
    WRITTEN.clear()
    provider = ScriptedProvider(
        [
            calls(call("w1", "write_file", path="/a")),
            calls(call("w2", "write_file", path="/b")),
            answer("Both written."),
        ]
    )
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["write_file"]))
    turn = NeuronTurn(provider, tools=[write_file], config=config)
    paused = await turn.run("Write two files")

    done = await turn.run(
        decisions=[Decision.approve("w1", always=True)], message_history=paused.all_messages()
    )

    assert done.output == "Both written." and WRITTEN == ["/a", "/b"]
    assert done.turn_output.effects == []  # no session: nothing kept for later runs


async def test_a_new_message_on_a_history_waiting_on_calls_says_how_to_resume_in_code() -> None:
    provider = ScriptedProvider([calls(call("w1", "write_file", path="/x"))])
    config = NeuronTurnConfig(approval=ApprovalPolicy.of(["write_file"]))
    turn = NeuronTurn(provider, tools=[write_file], config=config)
    paused = await turn.run("Write /x")

    with pytest.raises(AwaitingApprovalError) as waiting:
        await turn.run("something else", message_history=paused.all_messages())

    said = str(waiting.value)
    assert "call(s) w1 that have no result" in said
    assert "run(decisions=[...], message_history=...)" in said and "None" not in said


@pytest.mark.parametrize(
    ("part", "words"),
    [
        (TextPart(5), "TextPart at content.0. whose text is int"),  # type: ignore[arg-type]
        (ToolUsePart(7, "echo", {}), "ToolUsePart at content.0. whose id is int"),  # type: ignore[arg-type]
        (ToolUsePart("c1", "echo", {"x": float("nan")}), "whose input is not JSON"),
        (ToolUsePart("c1", "echo", {1: "x"}), "whose input is not JSON"),  # type: ignore[dict-item]
        (ToolResultPart("c1", {"x": 1}), "whose content is dict"),  # type: ignore[arg-type]
        (ToolResultPart("c1", "ok", files=("a.png",)), "files hold what is no image"),  # type: ignore[arg-type]
        (ThinkingPart("hm", signature=3), "whose signature is int"),  # type: ignore[arg-type]
        (RawPart("openai", object()), "whose data is not JSON"),  # type: ignore[arg-type]
    ],
)
async def test_a_part_whose_fields_are_of_the_wrong_type_is_refused_naming_the_field(
    part: Any, words: str
) -> None:
    provider = ScriptedProvider([])
    history = [ProviderMessage("user", (part,))]
    with pytest.raises(MessageHistoryError, match=words):
        await NeuronTurn(provider).run("hi", message_history=history)
    with pytest.raises(MessageHistoryError, match=words):
        messages_to_json(history)
    assert provider.requests == []


def test_a_message_pinned_with_no_boolean_is_refused() -> None:
    with pytest.raises(MessageHistoryError, match="has pinned='yes'"):
        check_history([ProviderMessage("user", (TextPart("hi"),), pinned="yes")])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "hostile",
    [
        ToolUsePart("c1", "no such tool!", {}),  # a name no tool has
        ToolUsePart("c1", "forecast", {"city": ["not", "a", "string"]}),  # arguments refused
    ],
)
async def test_a_call_the_model_got_wrong_round_trips_and_the_conversation_goes_on(
    hostile: ToolUsePart,
) -> None:
    provider = ScriptedProvider([calls(hostile), answer("Sorry."), answer("Again.")])
    turn = NeuronTurn(provider, tools=[forecast])

    first = await turn.run("Weather?")
    again = await turn.run("And now?", message_history=first.all_messages())

    assert messages_from_json(first.all_messages_json()) == first.all_messages()
    assert type(first.all_messages()[1].content[0]) is ToolUsePart  # no loop-private kind
    assert again.output == "Again."
