"""What a server for remote clients shows of a dispatch: its own events, its output, its end."""

from __future__ import annotations

import pytest

from layer0 import (
    Base64Source,
    Content,
    ExitReason,
    ImageBlock,
    ObserverHalt,
    TextBlock,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    UrlSource,
)
from neuron_orch_local import LocalOrchestrator
from neuron_turn import (
    ModelCallStart,
    NeuronTurn,
    NeuronTurnConfig,
    OutputSpec,
    TextDelta,
    answer_images,
    answer_text,
    follow_dispatch,
    relay,
    stopped_reason,
    typed_result,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from ..plugins.orch_local.test_answers import agent, delegate_call, orchestrate


def ask(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user")


def delegating() -> LocalOrchestrator:
    boss = ScriptedProvider(
        [tool_call_response(delegate_call("child", "sum it")), text_response("boss: 391")],
        chunk_size=4,
    )
    child = ScriptedProvider([text_response("child: 391")], chunk_size=4)
    return orchestrate({"boss": agent(boss, "delegate"), "child": agent(child)})


async def test_a_followed_dispatch_yields_its_own_events_not_its_delegations() -> None:
    followed = follow_dispatch(delegating(), "boss", ask("sum"))
    async with followed:
        events = [event async for event in followed]

    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "boss: 391"  # the child's text streamed in its own workflow
    assert [e.call for e in events if isinstance(e, ModelCallStart)] == [1, 2]
    assert followed.output.message.as_text() == "boss: 391"


async def test_a_dispatch_followed_without_streaming_yields_nothing_and_has_its_output() -> None:
    followed = follow_dispatch(delegating(), "boss", ask("sum"), stream=False)
    async with followed:
        events = [event async for event in followed]

    assert events == [] and followed.output.message.as_text() == "boss: 391"


async def test_the_output_of_a_dispatch_not_read_to_its_end_is_refused() -> None:
    followed = follow_dispatch(delegating(), "boss", ask("sum"))
    with pytest.raises(RuntimeError, match="once its events are all read"):
        followed.output  # noqa: B018


def ended(reason: ExitReason, text: str | list[TextBlock] = "") -> TurnOutput:
    return TurnOutput(
        message=Content(text), exit_reason=reason, metadata=TurnMetadata.zero(), effects=[]
    )


def test_a_stopped_turn_is_told_by_its_reason_and_the_start_of_what_it_said() -> None:
    assert stopped_reason(ended("max_turns", "half done")) == (
        "max_turns",
        "the turn stopped before a complete answer (it ended with max_turns): half done",
    )
    assert stopped_reason(ended(ObserverHalt(reason="no"))) == (
        "observer_halt",
        "the turn stopped before a complete answer (a hook stopped the turn: no)",
    )
    kind, words = stopped_reason(ended("max_turns", "x" * 5000), "a guardrail tripped")
    assert kind == "max_turns" and words.endswith("(a guardrail tripped): " + "x" * 2000)


async def test_answer_text_joins_every_text_block_and_typed_result_is_the_typed_answer() -> None:
    blocks = [TextBlock(text="a"), TextBlock(text="b")]
    assert answer_text(ended("complete", blocks)) == "ab"
    assert typed_result(ended("complete", "plain")) is None

    native = NeuronTurnConfig(output_mode="native")
    answer = OutputSpec.json_schema({"type": "object", "properties": {"n": {"type": "integer"}}})
    model = ScriptedProvider([text_response('{"n": 391}')])
    typed = NeuronTurn(model, config=native, output_type=answer)
    assert typed_result(await typed.execute(ask("17*23?"))) == {"n": 391}


def test_answer_images_are_the_image_blocks_in_order_and_none_for_text() -> None:
    first = ImageBlock(source=Base64Source(data="iVBORw0K"), media_type="image/png")
    second = ImageBlock(source=UrlSource(url="https://x.example/b.webp"), media_type="image/webp")
    output = ended("complete", [first, TextBlock(text="and"), second])
    assert answer_images(output) == [first, second]
    assert answer_images(ended("complete", "plain")) == []


class Names:
    """A translator naming each event's kind, and the end."""

    def on(self, event: object) -> list[str]:
        return [type(event).__name__] if isinstance(event, ModelCallStart | TextDelta) else []

    def failed(self, exc: BaseException) -> list[str]:
        return [f"failed: {exc}"]

    def finished(self, output: TurnOutput) -> list[str]:
        return [f"finished: {output.message.as_text()}"]


async def test_relay_translates_the_dispatchs_events_then_its_end_or_its_failure() -> None:
    said = [m async for m in relay(delegating(), "boss", ask("sum"), Names(), stream=False)]
    assert said == ["finished: boss: 391"]

    streamed = [m async for m in relay(delegating(), "boss", ask("sum"), Names())]
    assert streamed[0] == "ModelCallStart" and "TextDelta" in streamed
    assert streamed[-1] == "finished: boss: 391"

    failing = [m async for m in relay(delegating(), "nobody", ask("sum"), Names())]
    assert len(failing) == 1 and failing[0].startswith("failed: ") and "nobody" in failing[0]
