"""MESSAGES_SNAPSHOT over real loopback HTTP: a run that finishes or pauses sends its
conversation (the messages sent, then what the turn added, under the ids its events
used) before its end; a failed run sends none; whatever the history holds, the
snapshot is valid AG-UI JSON with files named, never their bytes."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx
from ag_ui.core import EventType, RunAgentInput
from neuron_ag_ui import AgUiRunner, serve_ag_ui
from pydantic import BaseModel

from layer0 import (
    Content,
    CustomBlock,
    HistoryAppend,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TurnInput,
    TurnMetadata,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ToolReturn, tool
from neuron_tool.files import document_block, image_block
from neuron_turn import (
    ApprovalPolicy,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderError,
    ProviderResponse,
    TextPart,
    ThinkingPart,
    TokenUsage,
    ToolUsePart,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response
from tests.serving import running

from ._server import EVENTS, TOKEN, assistant, of, run, run_input, serving, tool_message, types
from ._server import user as user_message

APPROVAL = NeuronTurnConfig(model="m", approval=ApprovalPolicy.of(["weather"]))
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
PICK_COLOUR = {
    "name": "pick_colour",
    "description": "Ask the user to pick a colour in their browser.",
    "parameters": {"type": "object", "properties": {"choices": {"type": "array"}}},
}


@tool
async def weather(city: str) -> str:
    """Today's weather in a city (pretend)."""
    return f"sunny in {city}"


@tool
async def photo(city: str) -> ToolReturn:
    """A photo of a city (pretend)."""
    return ToolReturn(f"a photo of {city}", files=[image_block(PNG)])


class Forecast(BaseModel):
    city: str
    degrees: int


def snapshot_of(events: Sequence[Any]) -> list[dict[str, Any]]:
    """The one MESSAGES_SNAPSHOT's messages, in their wire form."""
    (snapshot,) = of(events, EventType.MESSAGES_SNAPSHOT)
    wire = json.loads(snapshot.model_dump_json(by_alias=True))
    return list(wire["messages"])


def ids_of(events: Sequence[Any], kind: EventType) -> list[str]:
    return [e.message_id for e in of(events, kind)]


def user(text: str, id: str) -> dict[str, Any]:
    return user_message(text, id=id)


async def test_a_plain_answer_ends_with_the_sent_messages_and_the_answer_under_its_message_id() -> (
    None
):
    model = ScriptedProvider([text_response("Paris.")])
    sent = [user("Hi", "u1"), {**assistant("Hello."), "id": "a1"}, user("Capital of France?", "u2")]
    async with serving(model) as served:
        events = await run(served, run_input("t1", *sent))

    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    assert snapshot_of(events) == [
        {"id": "u1", "role": "user", "content": "Hi"},
        {"id": "a1", "role": "assistant", "content": "Hello."},
        {"id": "u2", "role": "user", "content": "Capital of France?"},
        {"id": text_id, "role": "assistant", "content": "Paris."},
    ]


async def test_a_runs_tool_calls_are_in_the_snapshot_with_json_arguments_and_results_by_id() -> (
    None
):
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "weather", {"city": "Oslo"}), text="Looking."),
            tool_call_response(
                ToolUsePart("c2", "weather", {"city": "Rome"}),
                ToolUsePart("c3", "weather", {"city": "Nice"}),
            ),
            text_response("Sunny everywhere."),
        ]
    )
    async with serving(model, tools=[weather]) as served:
        events = await run(served, run_input("t1", user("Weather?", "u1")))

    kinds = types(events)
    assert kinds[-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert kinds.count("MESSAGES_SNAPSHOT") == 1
    looking, sunny = ids_of(events, EventType.TEXT_MESSAGE_START)
    results = {e.tool_call_id: e.message_id for e in of(events, EventType.TOOL_CALL_RESULT)}
    starts = {e.tool_call_id: e.parent_message_id for e in of(events, EventType.TOOL_CALL_START)}
    assert starts == {"c1": looking, "c2": None, "c3": None}

    def call(id: str, city: str) -> dict[str, Any]:
        arguments = json.dumps({"city": city})
        return {
            "id": id,
            "type": "function",
            "function": {"name": "weather", "arguments": arguments},
        }

    def result(id: str, city: str) -> dict[str, Any]:
        return {"id": results[id], "role": "tool", "content": f"sunny in {city}", "toolCallId": id}

    assert snapshot_of(events) == [
        {"id": "u1", "role": "user", "content": "Weather?"},
        # Calls streamed in a text message are in its message; a client keeps calls
        # streamed without one in an assistant message of the first call's id.
        {
            "id": looking,
            "role": "assistant",
            "content": "Looking.",
            "toolCalls": [call("c1", "Oslo")],
        },
        result("c1", "Oslo"),
        {"id": "c2", "role": "assistant", "toolCalls": [call("c2", "Rome"), call("c3", "Nice")]},
        result("c2", "Rome"),
        result("c3", "Nice"),
        {"id": sunny, "role": "assistant", "content": "Sunny everywhere."},
    ]


async def test_a_typed_answer_is_in_the_snapshot_as_its_json_text() -> None:
    model = ScriptedProvider([text_response('{"city": "Oslo", "degrees": 21}')])
    async with serving(model, output_type=Forecast) as served:
        events = await run(served, run_input("t1", user("Forecast?", "u1")))

    assert types(events)[-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert events[-1].result == {"city": "Oslo", "degrees": 21}
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    answer = snapshot_of(events)[-1]
    assert answer["id"] == text_id and json.loads(answer["content"]) == events[-1].result


async def test_a_typed_answer_given_by_the_final_answer_tool_ends_the_snapshot_as_its_json() -> (
    None
):
    final = ToolUsePart("f1", "final_answer", {"city": "Oslo", "degrees": 21})
    model = ScriptedProvider([tool_call_response(final)])
    config = NeuronTurnConfig(model="m", output_mode="tool")
    async with serving(model, output_type=Forecast, config=config) as served:
        events = await run(served, run_input("t1", user("Forecast?", "u1")))

    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    messages = snapshot_of(events)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["id"] == "f1" and messages[1]["toolCalls"][0]["id"] == "f1"
    assert messages[2]["toolCallId"] == "f1"
    assert messages[-1]["id"] == text_id
    assert json.loads(messages[-1]["content"]) == {"city": "Oslo", "degrees": 21}


async def test_a_run_paused_for_approval_sends_the_snapshot_before_its_interrupt_events() -> None:
    model = ScriptedProvider([tool_call_response(ToolUsePart("c1", "weather", {"city": "Oslo"}))])
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        events = await run(served, run_input("t1", user("Weather?", "u1")))

    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "MESSAGES_SNAPSHOT",
        "CUSTOM",
        "RUN_FINISHED",
    ]
    assert events[-1].outcome.type == "interrupt"
    arguments = json.dumps({"city": "Oslo"})
    assert snapshot_of(events) == [
        {"id": "u1", "role": "user", "content": "Weather?"},
        {
            "id": "c1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": arguments},
                }
            ],
        },
    ]


async def test_a_resumed_run_snapshots_what_was_sent_then_the_approved_result_and_the_answer() -> (
    None
):
    held = ToolUsePart("c1", "weather", {"city": "Oslo"})
    model = ScriptedProvider([tool_call_response(held), text_response("Sunny in Oslo.")])
    async with serving(model, tools=[weather], config=APPROVAL) as served:
        paused = await run(served, run_input("t1", user("Weather?", "u1")))
        sent = snapshot_of(paused)  # what a client holds after the pause
        resume = [{"interruptId": "c1", "status": "resolved", "payload": {"approve": True}}]
        events = await run(served, run_input("t1", *sent, resume=resume))

    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    (result,) = of(events, EventType.TOOL_CALL_RESULT)
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    assert snapshot_of(events) == [
        *sent,
        {"id": result.message_id, "role": "tool", "content": "sunny in Oslo", "toolCallId": "c1"},
        {"id": text_id, "role": "assistant", "content": "Sunny in Oslo."},
    ]


async def test_a_frontend_tools_result_the_client_sent_is_in_the_snapshot_once_under_its_id() -> (
    None
):
    picking = ToolUsePart("c2", "pick_colour", {"choices": ["red", "blue"]})
    model = ScriptedProvider([tool_call_response(picking), text_response("Red it is.")])
    async with serving(model) as served:
        await run(served, run_input("t1", user("Pick a colour", "u1"), tools=[PICK_COLOUR]))
        answer = {**tool_message("c2", "red"), "id": "r1"}
        sent = [user("Pick a colour", "u1"), {**assistant(calls=[picking]), "id": "c2"}, answer]
        events = await run(served, run_input("t1", *sent, tools=[PICK_COLOUR]))

    messages = snapshot_of(events)
    assert [m["id"] for m in messages[:3]] == ["u1", "c2", "r1"]
    assert [m for m in messages if m["role"] == "tool"] == [
        {"id": "r1", "role": "tool", "content": "red", "toolCallId": "c2"}
    ]
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    assert messages[3:] == [{"id": text_id, "role": "assistant", "content": "Red it is."}]


async def test_a_call_id_the_model_reuses_next_turn_gets_a_fresh_message_id_and_its_result() -> (
    None
):
    # Some models number their calls afresh each turn: "c1" again in the second run.
    again = ToolUsePart("c1", "weather", {"city": "Rome"})
    model = ScriptedProvider(
        [
            tool_call_response(ToolUsePart("c1", "weather", {"city": "Oslo"})),
            text_response("Sunny in Oslo."),
            tool_call_response(again),
            text_response("Sunny in Rome."),
        ]
    )
    async with serving(model, tools=[weather]) as served:
        first = await run(served, run_input("t1", user("Oslo?", "u1")))
        sent = [*snapshot_of(first), user("And Rome?", "u2")]
        events = await run(served, run_input("t1", *sent))

    messages = snapshot_of(events)
    assert messages[: len(sent)] == sent
    added = messages[len(sent) :]
    assert [m["role"] for m in added] == ["assistant", "tool", "assistant"]
    # The turn renamed the call, and its events name it so from its start; the message
    # holding it gets an id of its own, not the id of the first run's message sent back.
    (result,) = of(events, EventType.TOOL_CALL_RESULT)
    assert result.tool_call_id != "c1"
    assert {e.tool_call_id for e in of(events, EventType.TOOL_CALL_START)} == {result.tool_call_id}
    assert {e.tool_call_id for e in of(events, EventType.TOOL_CALL_ARGS)} == {result.tool_call_id}
    assert [c["id"] for c in added[0]["toolCalls"]] == [result.tool_call_id]
    assert added[0]["id"] != "c1"
    assert added[1] == {
        "id": result.message_id,
        "role": "tool",
        "content": "sunny in Rome",
        "toolCallId": result.tool_call_id,
    }
    assert len({m["id"] for m in messages}) == len(messages)


async def test_the_models_thinking_is_in_the_snapshot_under_its_reasoning_message_id() -> None:
    thinking = ProviderResponse(
        content=(ThinkingPart("Two and two.", signature="sig"), TextPart("Four.")),
        stop_reason="end_turn",
        usage=TokenUsage(),
        model="scripted",
    )
    model = ScriptedProvider([thinking])
    async with serving(model) as served:
        events = await run(served, run_input("t1", user("2+2?", "u1")))

    (reasoning_id,) = ids_of(events, EventType.REASONING_MESSAGE_START)
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    assert snapshot_of(events)[1:] == [
        {"id": reasoning_id, "role": "reasoning", "content": "Two and two."},
        {"id": text_id, "role": "assistant", "content": "Four."},
    ]


async def test_a_failed_run_sends_no_snapshot_and_ends_with_run_error() -> None:
    model = ScriptedProvider([ProviderError("the model is down", provider="scripted")])
    async with serving(model) as served:
        events = await run(served, run_input("t1", user("Hi", "u1")))

    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]


async def test_a_run_stopped_by_a_limit_sends_no_snapshot() -> None:
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "weather", {"city": "Oslo"})), text_response("x")]
    )
    config = NeuronTurnConfig(model="m", max_turns=1)
    async with serving(model, tools=[weather], config=config) as served:
        events = await run(served, run_input("t1", user("Weather?", "u1")))

    assert types(events)[-1] == "RUN_ERROR" and "MESSAGES_SNAPSHOT" not in types(events)


async def test_with_messages_snapshot_off_a_run_sends_none() -> None:
    model = ScriptedProvider([text_response("Paris.")])
    async with serving(model, messages_snapshot=False) as served:
        events = await run(served, run_input("t1", user("Capital of France?", "u1")))

    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]


async def test_a_tools_image_is_named_in_its_result_never_sent_as_base64() -> None:
    model = ScriptedProvider(
        [tool_call_response(ToolUsePart("c1", "photo", {"city": "Oslo"})), text_response("Nice.")]
    )
    async with serving(model, tools=[photo]) as served:
        body, events = await raw_run(served.url, run_input("t1", user("Show Oslo", "u1")))

    (result,) = [m for m in snapshot_of(events) if m["role"] == "tool"]
    assert result["content"] == "a photo of Oslo[image: image/png]"
    assert base64.b64encode(PNG).decode() not in body


async def test_a_non_streaming_runs_answer_keeps_the_id_of_the_text_message_it_came_in() -> None:
    store = InMemoryStore()
    turn = NeuronTurn(ScriptedProvider([text_response("Paris.")]), state=store)
    runner = AgUiRunner(LocalOrchestrator({"helper": turn}, store), "helper", stream=False)
    body = run_input("t1", user("Capital of France?", "u1"))
    events = [e async for e in runner.run(RunAgentInput.model_validate(body))]

    assert types(events)[-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    assert snapshot_of(events)[-1] == {"id": text_id, "role": "assistant", "content": "Paris."}


# --- whatever the history holds -------------------------------------------------------


class HistoryOrchestrator:
    """Answers every dispatch with a turn output whose history append holds `messages`."""

    def __init__(self, messages: list[Any], answer: str = "done") -> None:
        self.messages = messages
        self.answer = answer

    async def dispatch(self, agent: str, input: TurnInput) -> TurnOutput:
        assert input.session is not None
        append = HistoryAppend(session=input.session, turn_id="turn-1", messages=self.messages)
        return TurnOutput(
            message=Content(self.answer),
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=[append.effect()],
        )


async def serving_history(
    orchestrator: HistoryOrchestrator, then: Callable[[str], Awaitable[Any]]
) -> Any:
    def serve(on_ready: Callable[[str], object]) -> Awaitable[None]:
        return serve_ag_ui(orchestrator, "helper", port=0, token=TOKEN, on_ready=on_ready)  # type: ignore[arg-type]

    async with running(serve) as url:
        return await then(url)


async def raw_run(url: str, body: dict[str, Any]) -> tuple[str, list[Any]]:
    """POST a run; return its body as text and its events, each validated as AG-UI's."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(url + "/", json=body, headers=headers)
    text = response.content.decode("utf-8")  # strict: the stream is UTF-8 throughout
    # SSE lines end at CR or LF only: U+2028 in a string is no line break to it.
    lines = [line for line in text.split("\n") if line.startswith("data: ")]
    return text, [EVENTS.validate_json(line[len("data: ") :]) for line in lines]


def block(value: Any) -> Any:
    return value.model_dump(mode="json")


async def test_hostile_history_makes_a_valid_snapshot_uncut_with_files_named_not_sent() -> None:
    huge = "A" * 2_000_000 + "\udcff" + '"}\n\ndata: {"type": "RUN_ERROR"}'
    arguments = {"q": "\x00</script>\u2028", "n": [1, {"deep": None}]}
    document = document_block(b"%PDF-1.7 secret", name="report.pdf")
    messages = [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": [
                block(CustomBlock(content_type="neuron.thinking", data={"thinking": "hm\udc80"})),
                block(TextBlock(text="ok \udcff")),
                block(
                    ImageBlock.model_validate(
                        {
                            "source": {"type": "base64", "data": base64.b64encode(PNG).decode()},
                            "media_type": "image/png",
                        }
                    )
                ),
                block(document),
                block(CustomBlock(content_type="neuron.raw", data={"provider": "x", "data": "z"})),
                block(CustomBlock(content_type="x.weird", data={"a": 1})),
                block(ToolUseBlock(id="c9", name="search", input=arguments)),
            ],
        },
        {
            "role": "user",
            "content": [
                block(ToolResultBlock(tool_use_id="c9", content=huge, is_error=True)),
                block(
                    CustomBlock(
                        content_type="neuron.tool_files",
                        data={"tool_use_id": "c9", "files": [block(image_block(PNG))]},
                    )
                ),
                block(TextBlock(text="Please go on.")),
            ],
        },
        {"role": "assistant", "content": "done"},
    ]
    body, events = await serving_history(
        HistoryOrchestrator(messages), lambda url: raw_run(url, run_input("t1", user("Hi", "u1")))
    )

    assert types(events)[-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert base64.b64encode(PNG).decode() not in body
    assert base64.b64encode(b"%PDF-1.7 secret").decode() not in body
    reasoning, answer, result, said, done = snapshot_of(events)[1:]
    assert reasoning["role"] == "reasoning" and reasoning["content"] == "hm\ufffd"
    assert answer["content"] == (
        "ok \ufffd[image: image/png][document: report.pdf, application/pdf][x.weird]"
    )
    (call,) = answer["toolCalls"]
    assert json.loads(call["function"]["arguments"]) == arguments
    expected = huge.replace("\udcff", "\ufffd") + "[image: image/png]"
    assert result["content"] == expected and len(result["content"]) == len(expected)  # uncut
    assert result["toolCallId"] == "c9" and result["error"] == huge.replace("\udcff", "\ufffd")
    assert said == {"id": said["id"], "role": "user", "content": "Please go on."}
    (text_id,) = ids_of(events, EventType.TEXT_MESSAGE_START)
    assert done == {"id": text_id, "role": "assistant", "content": "done"}
    assert len({m["id"] for m in snapshot_of(events)}) == 6  # each message its own id


async def test_a_history_append_that_does_not_read_sends_no_snapshot_and_the_run_finishes() -> None:
    messages = [{"role": "user", "content": "Hi"}, {"role": "system", "content": "sneaky"}]
    _, events = await serving_history(
        HistoryOrchestrator(messages), lambda url: raw_run(url, run_input("t1", user("Hi", "u1")))
    )

    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
