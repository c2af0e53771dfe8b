"""`end_strategy`: what becomes of the tool calls a final answer comes with."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from layer0 import (
    EffectPolicy,
    HandoffEffect,
    LogEffect,
    SessionScope,
    TurnConfig,
    WriteMemoryEffect,
)
from neuron_tool import RunContext, tool
from neuron_turn import (
    GUARDRAIL_TRIPPED,
    ApprovalPolicy,
    EndStrategy,
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    Tripwire,
    UsageLimits,
    output_guardrail,
    output_value,
)
from neuron_turn.testing import ScriptedProvider

from .support import call, calls

ACCEPTED = "Final answer received."


class Reply(BaseModel):
    text: str


class Outbox:
    """A tool with a side effect: it records each message it sends."""

    def __init__(self) -> None:
        self.sent: list[str] = []

        @tool
        async def notify(message: str) -> str:
            """Send a message to the on-call engineer."""
            self.sent.append(message)
            return f"sent {message!r}"

        @tool
        async def page(message: str) -> str:
            """Page the on-call engineer (needs approval)."""
            self.sent.append(f"PAGE {message}")
            return "paged"

        self.tools = [notify, page]


def _turn(
    script: list[Any], strategy: EndStrategy, outbox: Outbox, **config: Any
) -> tuple[NeuronTurn[Reply], ScriptedProvider]:
    provider = ScriptedProvider(script)
    settings = NeuronTurnConfig(
        model="test-model", output_mode="tool", end_strategy=strategy, **config
    )
    turn = NeuronTurn(provider, tools=outbox.tools, config=settings, output_type=Reply)
    return turn, provider


def _results(message: ProviderMessage) -> list[tuple[str, str]]:
    return [
        (part.tool_use_id, part.content)
        for part in message.content
        if isinstance(part, ToolResultPart)
    ]


FINAL = call("f1", "final_answer", text="Restarted the service.")
NOTIFY = call("n1", "notify", message="restarted")


async def test_early_answers_the_calls_beside_the_final_answer_unrun() -> None:
    outbox = Outbox()
    turn, _ = _turn([calls(NOTIFY, FINAL)], "early", outbox)

    result = await turn.run("restart it and tell on-call")

    assert result.output == Reply(text="Restarted the service.") and outbox.sent == []
    assert _results(result.new_messages()[-1]) == [
        ("n1", "Not run: the turn ended with the final answer."),
        ("f1", ACCEPTED),
    ]


async def test_graceful_runs_the_calls_beside_the_final_answer_then_ends_with_it() -> None:
    outbox = Outbox()
    turn, provider = _turn([calls(NOTIFY, FINAL)], "graceful", outbox)

    result = await turn.run("restart it and tell on-call")

    assert result.output == Reply(text="Restarted the service.")
    assert result.exit_reason == "complete" and len(provider.requests) == 1
    assert outbox.sent == ["restarted"]
    assert _results(result.new_messages()[-1]) == [("n1", "sent 'restarted'"), ("f1", ACCEPTED)]
    assert [record.name for record in result.turn_output.metadata.tools_called] == ["notify"]


async def test_graceful_keeps_the_first_valid_answer_and_leaves_other_answers_unrun() -> None:
    outbox = Outbox()
    second = call("f2", "final_answer", text="Something else.")
    turn, _ = _turn([calls(FINAL, NOTIFY, second)], "graceful", outbox)

    result = await turn.run("restart it")

    assert result.output == Reply(text="Restarted the service.")
    assert _results(result.new_messages()[-1]) == [
        ("f1", ACCEPTED),
        ("n1", "sent 'restarted'"),
        ("f2", "Not run: the turn ended with the final answer."),
    ]


async def test_graceful_answers_a_call_that_would_wait_for_approval_unrun_and_ends() -> None:
    outbox = Outbox()
    page = call("p1", "page", message="restarted")
    approval = ApprovalPolicy.of(["page"])
    turn, _ = _turn([calls(page, NOTIFY, FINAL)], "graceful", outbox, approval=approval)

    result = await turn.run("restart it, page and tell on-call")

    assert result.exit_reason == "complete" and result.output.text == "Restarted the service."
    assert outbox.sent == ["restarted"]
    results = dict(_results(result.new_messages()[-1]))
    assert results["p1"].startswith("Not run: it would wait (for approval")
    assert results["n1"] == "sent 'restarted'"


async def test_graceful_answers_calls_past_the_tool_call_limit_unrun_saying_so() -> None:
    outbox = Outbox()
    limits = UsageLimits(tool_calls=1)
    again = call("n2", "notify", message="twice")
    turn, _ = _turn([calls(NOTIFY, again, FINAL)], "graceful", outbox, usage_limits=limits)

    result = await turn.run("restart it and tell on-call twice")

    assert result.exit_reason == "complete" and outbox.sent == []
    results = dict(_results(result.new_messages()[-1]))
    assert results["n1"].startswith("Not run:") and results["n2"].startswith("Not run:")
    logs = [e for e in result.turn_output.effects if isinstance(e, LogEffect)]
    assert any("usage_limit" in (log.data or {}) for log in logs)  # type: ignore[operator]


async def test_graceful_declares_a_memory_write_beside_the_final_answer() -> None:
    outbox = Outbox()
    remember = call("m1", "write_memory", scope="session:s1", key="restarts", value=1)
    turn, _ = _turn([calls(remember, FINAL)], "graceful", outbox)

    result = await turn.run("restart it and remember", session="s1")

    written = [e for e in result.turn_output.effects if isinstance(e, WriteMemoryEffect)]
    assert written == [WriteMemoryEffect(scope=SessionScope(id="s1"), key="restarts", value=1)]


async def test_an_invalid_final_answer_beside_calls_runs_them_and_asks_again_either_way() -> None:
    for strategy in ("early", "graceful"):
        outbox = Outbox()
        bad = call("f0", "final_answer", text=5)
        script = [calls(NOTIFY, bad), calls(call("f1", "final_answer", text="ok"))]
        turn, provider = _turn(script, strategy, outbox)  # type: ignore[arg-type]

        result = await turn.run("restart it")

        assert output_value(result.turn_output, Reply) == Reply(text="ok")
        assert outbox.sent == ["restarted"] and len(provider.requests) == 2


async def test_graceful_leaves_every_call_of_the_answer_exactly_one_result_in_order() -> None:
    outbox = Outbox()
    turn, _ = _turn([calls(NOTIFY, FINAL, call("n2", "notify", message="b"))], "graceful", outbox)

    result = await turn.run("restart it")

    asked, answered = result.new_messages()[-2:]
    ids = [part.id for part in asked.content if isinstance(part, ToolUsePart)]
    assert [tool_use_id for tool_use_id, _ in _results(answered)] == ids == ["n1", "f1", "n2"]


async def test_an_output_guardrail_withholding_the_answer_keeps_the_calls_that_ran_beside_it() -> (
    None
):
    # The whole answer message went, so the history no longer said the message was sent.
    @output_guardrail(name="review")
    async def held_for_review(context: RunContext[Any], reply: Reply) -> Tripwire:
        return Tripwire("held for review")

    outbox = Outbox()
    turn, _ = _turn([calls(NOTIFY, FINAL)], "graceful", outbox, guardrails=[held_for_review])

    result = await turn.run("restart it and tell on-call")

    assert result.exit_reason == GUARDRAIL_TRIPPED and outbox.sent == ["restarted"]
    asked, answered, said = result.new_messages()[1:]
    assert list(asked.content) == [NOTIFY]
    assert _results(answered) == [("n1", "sent 'restarted'")]
    assert list(said.content) == [
        TextPart("Stopped by guardrail 'review' on the answer: held for review")
    ]


async def test_an_output_guardrail_withholds_the_whole_answer_when_ending_early() -> None:
    @output_guardrail(name="review")
    async def held_for_review(context: RunContext[Any], reply: Reply) -> Tripwire:
        return Tripwire("held for review")

    outbox = Outbox()
    turn, _ = _turn([calls(NOTIFY, FINAL)], "early", outbox, guardrails=[held_for_review])

    result = await turn.run("restart it and tell on-call")

    assert [message.role for message in result.new_messages()] == ["user", "assistant"]


async def test_graceful_answers_a_handoff_beside_the_final_answer_unrun() -> None:
    # A handoff ends the turn handing the conversation over, which an answer ends too:
    # it was declared beside the answer, the turn said `complete`, and an orchestrator
    # handed off, its next agent's output taking the answer's place.
    outbox = Outbox()
    handoff = call("h1", "handoff", agent="billing", state=None)
    grant = TurnConfig(effect_policy=EffectPolicy.of(["handoff:billing"]))
    turn, _ = _turn([calls(handoff, NOTIFY, FINAL)], "graceful", outbox)

    result = await turn.run("restart it and tell on-call", session="s1", config=grant)

    assert result.exit_reason == "complete" and outbox.sent == ["restarted"]
    assert not any(isinstance(e, HandoffEffect) for e in result.turn_output.effects)
    assert _results(result.new_messages()[-1]) == [
        ("h1", "Not run: a handoff cannot come with a final answer, which ends the turn."),
        ("n1", "sent 'restarted'"),
        ("f1", ACCEPTED),
    ]


def test_an_end_strategy_that_is_none_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="end_strategy must be one of early, graceful"):
        NeuronTurnConfig(end_strategy="exhaustive")  # type: ignore[arg-type]
