"""Delegation that answers back on Temporal's dev server: the child's output is the tool result."""

from __future__ import annotations

import pytest
from moneyed import Money
from temporalio.testing import WorkflowEnvironment

from layer0 import DelegateEffect, EffectPolicy, LogEffect, QueryPayload, TurnInput, usd
from layer0.testing import InMemoryStore
from neuron_orch_local import DELEGATION_LOG
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderResponse,
    TokenUsage,
    ToolResultPart,
    ToolUsePart,
)
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")


def delegate_call(agent: str, message: str) -> ToolUsePart:
    return ToolUsePart("c1", "delegate", {"agent": agent, "message": message})


def priced(
    response: ProviderResponse, tokens_in: int, tokens_out: int, cost: str
) -> ProviderResponse:
    return ProviderResponse(
        content=response.content,
        stop_reason=response.stop_reason,
        usage=TokenUsage(input_tokens=tokens_in, output_tokens=tokens_out),
        model=response.model,
        cost=usd(cost),
    )


def agent(provider: ScriptedProvider) -> NeuronTurn:
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())
    return NeuronTurn(provider, config=config)


def results_sent(provider: ScriptedProvider, call: int) -> list[ToolResultPart]:
    last = provider.requests[call - 1].messages[-1]
    return [part for part in last.content if isinstance(part, ToolResultPart)]


async def test_the_childs_answer_reaches_the_parents_model_with_costs_rolled_up(
    dev_env: WorkflowEnvironment,
) -> None:
    calculator = ScriptedProvider([priced(text_response("391"), 10, 2, "0.001")])
    researcher = ScriptedProvider(
        [
            priced(tool_call_response(delegate_call("calculator", "17 * 23")), 20, 5, "0.002"),
            priced(text_response("17 * 23 = 391"), 30, 6, "0.003"),
        ]
    )
    agents = {"researcher": agent(researcher), "calculator": agent(calculator)}
    async with hosting(dev_env, agents, InMemoryStore()) as orchestrator:
        result = await orchestrator.run(
            "researcher", TurnInput(message="What is 17 * 23?", trigger="user")
        )
        [record] = [e for e in result.output.effects if isinstance(e, LogEffect)]
        assert isinstance(record.data, dict)
        delegation = record.data[DELEGATION_LOG]
        assert isinstance(delegation, dict)
        child_id = delegation["workflow_id"]
        assert isinstance(child_id, str)
        status = await orchestrator.query(child_id, QueryPayload(query_type="status", params=None))
        listed = await orchestrator.query(
            result.workflow_id, QueryPayload(query_type="delegations", params=None)
        )

    assert results_sent(researcher, 2) == [ToolResultPart("c1", "391", is_error=False)]
    assert result.output.message.as_text() == "17 * 23 = 391"
    metadata = result.output.metadata
    assert (metadata.tokens_in, metadata.tokens_out) == (60, 13)
    assert metadata.cost == Money("0.006", "USD")
    assert not any(isinstance(e, DelegateEffect) for e in result.output.effects)
    assert child_id.startswith(f"{result.workflow_id}/t0/a-calculator-")
    assert delegation["cost"] == "0.001" and delegation["exit_reason"] == "complete"
    assert isinstance(status, dict)
    assert status["parent"] == result.workflow_id
    assert status["status"] == "completed"
    # Listed with the parent's delegations, as LocalOrchestrator lists them.
    [answered] = result.delegations
    assert (answered.agent, answered.workflow_id) == ("calculator", child_id)
    assert answered.output.message.as_text() == "391"
    assert isinstance(listed, list)
    assert [(d["agent"], d["workflow_id"]) for d in listed] == [("calculator", child_id)]


async def test_a_delegation_cycle_is_a_tool_error_for_the_model(
    dev_env: WorkflowEnvironment,
) -> None:
    a = ScriptedProvider(
        [tool_call_response(delegate_call("b", "help")), text_response("b could not help")]
    )
    b = ScriptedProvider(
        [tool_call_response(delegate_call("a", "back to you")), text_response("no luck")]
    )
    async with hosting(dev_env, {"a": agent(a), "b": agent(b)}, InMemoryStore()) as orchestrator:
        output = await orchestrator.dispatch("a", TurnInput(message="go", trigger="user"))

    [refused] = results_sent(b, 2)
    assert refused.is_error and "delegation cycle: a -> b -> a" in refused.content
    assert results_sent(a, 2) == [ToolResultPart("c1", "no luck", is_error=False)]
    assert output.message.as_text() == "b could not help"
