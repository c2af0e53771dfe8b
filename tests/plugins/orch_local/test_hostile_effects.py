"""A model's effect-tool calls the orchestrator would refuse are tool errors; its turn is kept.

Whatever target a hostile model names, a refusal it can read comes back as the
call's result, nothing is declared, and the turn (its history above all) is
kept, instead of the whole turn being refused after it ended.
"""

from __future__ import annotations

from layer0 import HISTORY_KEY, EffectPolicy, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import FunctionProvider, text_response, tool_call_response

GRANTS = EffectPolicy.of(["handoff", "signal", "delegate"])


def _asking(call: ToolUsePart) -> FunctionProvider:
    """A model making `call` until it reads an error, then answering with that error's text."""

    def respond(request: ProviderRequest) -> ProviderResponse:
        last = request.messages[-1].content
        errors = [p for p in last if isinstance(p, ToolResultPart) and p.is_error]
        if errors:
            return text_response(errors[0].content)
        return tool_call_response(call)

    return FunctionProvider(respond)


async def _dispatch(
    call: ToolUsePart,
    *,
    config: NeuronTurnConfig | None = None,
    **options: object,
) -> tuple[str, list[object]]:
    """Dispatch agent `a` making `call`; return its answer and its session's stored history."""
    store = InMemoryStore()
    turn = NeuronTurn(
        _asking(call), state=store, config=config or NeuronTurnConfig(effect_policy=GRANTS)
    )
    helper = NeuronTurn(FunctionProvider(lambda request: text_response("helped")))
    options.setdefault("default_policy", GRANTS)
    orchestrator = LocalOrchestrator({"a": turn, "b": helper}, store, **options)  # type: ignore[arg-type]
    output = await orchestrator.dispatch("a", TurnInput(message="hi", trigger="user", session="s"))
    history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    assert isinstance(history, list)
    text = output.message.as_text()
    assert text is not None
    return text, history


async def test_a_handoff_to_an_agent_there_is_not_is_a_tool_error_and_the_turn_is_kept() -> None:
    text, history = await _dispatch(ToolUsePart("c1", "handoff", {"agent": "nobody"}))
    assert "'nobody'" in text and "a, b" in text
    assert len(history) == 4


async def test_a_signal_to_a_workflow_there_is_not_is_a_tool_error_and_the_turn_is_kept() -> None:
    call = ToolUsePart("c1", "signal", {"target": "wf-none", "signal_type": "stop"})
    text, history = await _dispatch(call)
    assert "'wf-none'" in text
    assert len(history) == 4


async def test_a_handoff_past_the_depth_limit_is_a_tool_error_and_every_turn_is_kept() -> None:
    # `a` hands off to itself; the third handoff would pass max_depth=2.
    text, history = await _dispatch(ToolUsePart("c1", "handoff", {"agent": "a"}), max_depth=2)
    assert "max_depth" in text
    # Two turns handing off (a message, a call, its result), then the refused one ending.
    assert len(history) == 3 + 3 + 4


async def test_a_delegation_to_an_agent_there_is_not_unanswered_is_a_tool_error() -> None:
    call = ToolUsePart("c1", "delegate", {"agent": "nobody", "message": "x"})
    text, history = await _dispatch(call, answer_delegations=False)
    assert "'nobody'" in text
    assert len(history) == 4


async def test_a_memory_write_the_turn_grants_and_the_orchestrator_does_not_is_a_tool_error() -> (
    None
):
    call = ToolUsePart("c1", "write_memory", {"scope": "global", "key": "k", "value": 1})
    everything = NeuronTurnConfig(effect_policy=EffectPolicy.everything())
    text, history = await _dispatch(call, config=everything)
    assert "global" in text and "not granted" in text
    assert len(history) == 4
