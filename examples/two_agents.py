"""Two agents: a researcher that delegates arithmetic to a calculator agent, and reads its answer.

    python examples/two_agents.py                 # scripted models: no key, no network
    python examples/two_agents.py local:default   # the embedded local model (or any P:M)

The researcher may only delegate, and only to `calculator`; the calculator
has the `calculator` tool. `LocalOrchestrator` runs the calculator while
the researcher's `delegate` call waits, and the researcher's model reads
the calculator's answer as that call's result. The researcher's output
metadata holds both agents' tokens and cost.
"""

from __future__ import annotations

import asyncio
import sys

from layer0 import EffectPolicy, Turn, TurnInput, usd
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ToolRegistry
from neuron_turn import NeuronTurn, NeuronTurnConfig, TokenUsage, ToolUsePart, tools_by_name
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

QUESTION = "What is 17*23?"
DELEGATES = EffectPolicy(grants=("delegate:calculator",))
RESEARCHER = (
    "You answer questions. For any arithmetic, call the delegate tool with agent "
    "'calculator' and the calculation as the message, then answer with its result."
)
CALCULATOR = "You compute arithmetic with the calculator tool and answer with the number only."


def scripted() -> dict[str, Turn]:
    """Both agents over scripted models: what a real model would do, call for call."""
    usage, cost = TokenUsage(input_tokens=100, output_tokens=20), usd("0.0001")
    ask = ToolUsePart("d1", "delegate", {"agent": "calculator", "message": QUESTION})
    researcher = ScriptedProvider(
        [
            tool_call_response(ask, usage=usage, cost=cost),
            text_response(
                "17*23 = 391 (worked out by the calculator agent).", usage=usage, cost=cost
            ),
        ]
    )
    compute = ToolUsePart("c1", "calculator", {"expression": "17*23"})
    calculator = ScriptedProvider(
        [
            tool_call_response(compute, usage=usage, cost=cost),
            text_response("391", usage=usage, cost=cost),
        ]
    )
    return {
        "researcher": NeuronTurn(
            researcher, config=NeuronTurnConfig(system=RESEARCHER, effect_policy=DELEGATES)
        ),
        "calculator": NeuronTurn(
            calculator,
            tools=ToolRegistry(tools_by_name(["calculator"])),
            config=NeuronTurnConfig(system=CALCULATOR),
        ),
    }


def real(model: str) -> dict[str, Turn]:
    """Both agents over `model` (`"<provider>:<model>"`), built from the installed plugins."""
    # The local provider hides effect tools from its small model unless asked to show them.
    shown = {"effect_tools": True} if model.startswith("local:") else {}
    return {
        "researcher": NeuronTurn.from_plugins(
            model=model,
            system=RESEARCHER,
            config=NeuronTurnConfig(effect_policy=DELEGATES, tool_choice="required"),
            provider_options=shown,
        ),
        "calculator": NeuronTurn.from_plugins(
            model=model,
            tools=["calculator"],
            system=CALCULATOR,
            config=NeuronTurnConfig(tool_choice="required"),
        ),
    }


async def main(model: str | None) -> None:
    agents = scripted() if model is None else real(model)
    orchestrator = LocalOrchestrator(agents, InMemoryStore(), policies={"researcher": DELEGATES})
    try:
        result = await orchestrator.run("researcher", TurnInput(message=QUESTION, trigger="user"))
    finally:
        for turn in agents.values():
            close = getattr(getattr(turn, "provider", None), "aclose", None)
            if close is not None:
                await close()
    print(result.output.message.as_text())
    for delegation in result.delegations:
        print(f"  {delegation.agent} answered: {delegation.output.message.as_text()}")
    metadata = result.output.metadata
    totals = f"{metadata.tokens_in} tokens in, {metadata.tokens_out} out"
    print(f"  both agents: {totals}, ${metadata.cost.amount}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None))
