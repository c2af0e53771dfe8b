"""On Temporal too, a model's effect-tool call the worker would refuse is a tool error.

The call's result says why and nothing is declared, so the turn and its
history are kept instead of the whole turn being refused after it ended.
"""

from __future__ import annotations

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import HISTORY_KEY, EffectPolicy, SessionScope, TurnInput
from layer0.testing import InMemoryStore
from neuron_orch_temporal import TurnPolicy
from neuron_orch_temporal.ledger import APPLIED_SCOPE
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderRequest,
    ProviderResponse,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)

from .agents import WaiterTurn
from .conftest import FAST, hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

DECLARING = FAST.model_copy(update={"answer_delegations": False})


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
    env: WorkflowEnvironment, call: ToolUsePart, policy: TurnPolicy
) -> tuple[str, list[object]]:
    store = InMemoryStore()
    config = NeuronTurnConfig(effect_policy=EffectPolicy.everything())
    agents = {"a": NeuronTurn(_asking(call), state=store, config=config)}
    async with hosting(env, agents, store, policy=policy) as orchestrator:
        output = await orchestrator.dispatch(
            "a", TurnInput(message="hi", trigger="user", session="s")
        )
    history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    assert isinstance(history, list)
    text = output.message.as_text()
    assert text is not None
    return text, history


@pytest.mark.parametrize("policy", [FAST, DECLARING], ids=["answering", "declaring"])
async def test_a_handoff_to_an_agent_there_is_not_is_a_tool_error_and_the_turn_is_kept(
    env: WorkflowEnvironment, policy: TurnPolicy
) -> None:
    text, history = await _dispatch(env, ToolUsePart("c1", "handoff", {"agent": "nobody"}), policy)
    assert "'nobody'" in text
    assert len(history) == 4


async def test_a_signal_to_a_workflow_there_is_not_is_a_tool_error_and_the_turn_is_kept(
    env: WorkflowEnvironment,
) -> None:
    call = ToolUsePart("c1", "signal", {"target": "wf-none", "signal_type": "stop"})
    text, history = await _dispatch(env, call, FAST)
    assert "'wf-none'" in text
    assert len(history) == 4


async def test_a_signal_to_a_finished_workflow_is_a_tool_error_and_the_turn_is_kept(
    env: WorkflowEnvironment,
) -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(effect_policy=EffectPolicy.everything())
    call = ToolUsePart("c1", "signal", {"target": "hostile-waiter-1", "signal_type": "late"})
    agents = {"a": NeuronTurn(_asking(call), state=store, config=config), "waiter": WaiterTurn()}
    async with hosting(env, agents, store) as orchestrator:
        await orchestrator.run(
            "waiter", TurnInput(message="wait", trigger="task"), workflow_id="hostile-waiter-1"
        )
        output = await orchestrator.dispatch(
            "a", TurnInput(message="hi", trigger="user", session="s")
        )
    assert "'hostile-waiter-1'" in (output.message.as_text() or "")
    history = await store.read(SessionScope(id="s"), HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 4


async def test_a_delegation_closing_a_cycle_left_declared_is_a_tool_error(
    env: WorkflowEnvironment,
) -> None:
    call = ToolUsePart("c1", "delegate", {"agent": "a", "message": "again"})
    text, history = await _dispatch(env, call, DECLARING)
    assert "delegation cycle: a -> a" in text
    assert len(history) == 4


async def test_the_applied_effects_ledger_is_not_memory_to_read_or_change() -> None:
    # A model granted every custom scope must not pre-record a later turn's effect
    # there (the worker would skip it), drop a record (it would run twice), or read
    # other conversations' keys in it.
    store = InMemoryStore()
    ledger = f"custom:{APPLIED_SCOPE.name}"
    await store.write(APPLIED_SCOPE, "wf/run/t0/e0", {"agent": "b", "type": "write_memory"})
    calls = [
        ToolUsePart("c1", "write_memory", {"scope": ledger, "key": "wf/run/t1/e0", "value": 1}),
        ToolUsePart("c2", "delete_memory", {"scope": ledger, "key": "wf/run/t0/e0"}),
        ToolUsePart("c3", "list_memory", {"scope": ledger}),
        ToolUsePart("c4", "read_memory", {"scope": ledger, "key": "wf/run/t0/e0"}),
        ToolUsePart("c5", "write_memory", {"scope": "custom:notes", "key": "k", "value": 1}),
    ]
    provider = ScriptedProvider([tool_call_response(*calls), text_response("ok")])
    grants = EffectPolicy.of(["custom:*", "read:custom:*"])
    config = NeuronTurnConfig(effect_policy=grants, max_consecutive_failures=99)
    output = await NeuronTurn(provider, state=store, config=config).execute(
        TurnInput(message="hi", trigger="user", session="s")
    )
    results = provider.requests[1].messages[-1].content
    assert [r.is_error for r in results] == [True, True, False, True, False]  # type: ignore[union-attr]
    assert "wf/run" not in results[2].content  # type: ignore[union-attr]
    assert [e.type for e in output.effects] == ["write_memory", "custom"]
