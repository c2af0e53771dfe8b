"""The run state's shortcuts produce exactly what validation would."""

from __future__ import annotations

from pydantic import TypeAdapter

from layer0 import Content, HookContext, HookPoint, TurnConfig
from neuron_turn import NeuronTurnConfig
from neuron_turn.loop._run import RunState

from .support import dollars


def test_trusted_hook_context_equals_a_validated_one() -> None:
    run = RunState(NeuronTurnConfig().resolve(TurnConfig()), "s", [])
    run.tokens_in, run.tokens_out, run.turns_used, run.cost = 10, 5, 2, dollars("0.25")
    fast = run.hook_context(
        HookPoint.PRE_TOOL_USE, tool_name="t", tool_input={"a": [1]}, model_output=Content("x")
    )
    validated = HookContext(
        point=HookPoint.PRE_TOOL_USE,
        tool_name="t",
        tool_input={"a": [1]},
        tool_result=None,
        model_output=Content("x"),
        tokens_used=15,
        cost=dollars("0.25"),
        turns_completed=2,
        elapsed=fast.elapsed,
    )
    assert fast == validated
    assert fast.model_fields_set == validated.model_fields_set
    adapter = TypeAdapter(HookContext)
    assert adapter.dump_json(fast) == adapter.dump_json(validated)
    assert adapter.validate_json(adapter.dump_json(fast)) == fast
