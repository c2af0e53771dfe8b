"""An input's own options survive its approval pause: the resume answers as the turn would have."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import JsonValue

from layer0 import (
    DispatchFailed,
    EffectPolicy,
    NonRetryableError,
    SessionScope,
    TurnInput,
    WriteMemoryEffect,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_tool import ToolRegistry, tool
from neuron_turn import (
    ApprovalPolicy,
    Decision,
    EffectDeclared,
    NeuronTurn,
    NeuronTurnConfig,
    ToolResultPart,
    TurnDone,
    limit_crossed,
    output_kind,
    output_value,
    resume_input,
)
from neuron_turn.loop.paused_options import PAUSED_OPTIONS_KEY
from neuron_turn.testing import ScriptedProvider

from .support import answer, call, calls

SESSION = SessionScope(id="s1")

SCHEMA: JsonValue = {
    "type": "object",
    "properties": {"deleted": {"type": "integer"}},
    "required": ["deleted"],
}


@tool
async def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
async def read_file(path: str) -> str:
    """Read a file."""
    return f"(contents of {path})"


def _options(**options: JsonValue) -> dict[str, JsonValue]:
    return {"neuron_turn": options}


class _Agent:
    """One agent on a local orchestrator whose store outlives each scripted model."""

    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.model = ScriptedProvider([])

    async def run(self, script: list[Any], request: TurnInput, **config: Any) -> Any:
        self.model = ScriptedProvider(script)
        settings = NeuronTurnConfig(
            model="test-model", approval=ApprovalPolicy.of(["delete_file"]), **config
        )
        turn = NeuronTurn(
            self.model,
            tools=ToolRegistry([delete_file, read_file]),
            state=self.store,
            config=settings,
        )
        return await LocalOrchestrator({"a": turn}, self.store).dispatch("a", request)


def _ask(metadata: JsonValue = None) -> TurnInput:
    return TurnInput(message="tidy up", trigger="user", session="s1", metadata=metadata)


async def test_a_typed_answer_asked_for_by_the_input_is_typed_after_the_resume() -> None:
    agent = _Agent()
    paused = await agent.run(
        [calls(call("c1", "delete_file", path="old.log"))],
        _ask(_options(output_schema=SCHEMA, output_name="Tidied")),
    )
    assert paused.exit_reason.model_dump() == {"custom": "awaiting_approval"}

    done = await agent.run([answer('{"deleted": 1}')], resume_input("s1", [Decision.approve("c1")]))

    assert output_value(done) == {"deleted": 1}


async def test_an_inputs_output_mode_and_strictness_hold_after_the_resume() -> None:
    agent = _Agent()
    asked = _options(output_schema=SCHEMA, output_mode="tool", output_strict=False)
    await agent.run([calls(call("c1", "delete_file", path="old.log"))], _ask(asked))
    kept = await agent.store.read(SESSION, PAUSED_OPTIONS_KEY)
    assert isinstance(kept, dict) and isinstance(kept["options"], dict)
    assert (kept["options"]["output_mode"], kept["options"]["output_strict"]) == ("tool", False)

    done = await agent.run(
        [calls(call("f1", "final_answer", deleted=1))],
        resume_input("s1", [Decision.approve("c1")]),
    )

    assert output_value(done) == {"deleted": 1}
    assert "final_answer" in [tool.name for tool in agent.model.requests[0].tools]


async def test_an_inputs_output_text_holds_after_the_resume() -> None:
    agent = _Agent()
    asked = _options(output_schema=SCHEMA, output_text=True)
    await agent.run([calls(call("c1", "delete_file", path="old.log"))], _ask(asked))

    done = await agent.run([answer("Deleted it.")], resume_input("s1", [Decision.approve("c1")]))

    assert (output_value(done), output_kind(done)) == ("Deleted it.", "text")


async def test_the_resume_gets_what_the_paused_part_left_of_the_usage_limits() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "read_file", path="a"), call("c2", "delete_file", path="b"))],
        _ask(_options(usage_limits={"tool_calls": 3})),
    )
    kept = await agent.store.read(SESSION, PAUSED_OPTIONS_KEY)
    assert kept == {"pending": ["c2"], "options": {"usage_limits": {"tool_calls": 1}}}

    done = await agent.run(
        [calls(call("c3", "read_file", path="c"), call("c4", "read_file", path="d"))],
        resume_input("s1", [Decision.approve("c2")]),
    )

    assert done.exit_reason == "budget_exhausted"
    crossed = limit_crossed(done)
    assert crossed is not None and crossed.limit == "tool_calls"
    assert len(agent.model.requests) == 1  # no model call after the refused batch


async def test_a_stop_tool_the_input_named_ends_the_resumed_turn_with_its_result() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="old.log"))],
        _ask(_options(stop_at_tools=["delete_file"])),
    )

    done = await agent.run([], resume_input("s1", [Decision.approve("c1")]))

    assert done.exit_reason == "complete"
    assert done.message.root == "deleted old.log"
    assert agent.model.requests == []  # no model call after the stop tool


async def test_a_resumes_own_options_win_over_the_kept_ones_key_by_key() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="old.log"))],
        _ask(_options(output_schema=SCHEMA)),
    )
    resume = resume_input("s1", [Decision.approve("c1")])
    assert isinstance(resume.metadata, dict)
    own = resume.model_copy(
        update={"metadata": {**resume.metadata, **_options(stop_at_tools=["delete_file"])}}
    )

    done = await agent.run([answer("never")], own)

    assert done.message.root == "deleted old.log"  # its stop tool, not the kept schema


async def test_a_resume_given_usage_limits_still_answers_in_the_kept_type() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="old.log"))],
        _ask(_options(output_schema=SCHEMA, output_name="Tidied")),
    )
    resume = resume_input("s1", [Decision.approve("c1")])
    assert isinstance(resume.metadata, dict)
    limited = resume.model_copy(
        update={"metadata": {**resume.metadata, **_options(usage_limits={"tool_calls": 5})}}
    )

    done = await agent.run([answer("Done, I deleted it."), answer('{"deleted": 1}')], limited)

    assert output_value(done) == {"deleted": 1}  # the prose was sent back: still typed


async def test_a_resume_asking_for_an_output_of_its_own_replaces_the_kept_one_whole() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="old.log"))],
        _ask(_options(output_schema=SCHEMA, output_name="Tidied", output_text=True)),
    )
    resume = resume_input("s1", [Decision.approve("c1")])
    assert isinstance(resume.metadata, dict)
    other = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    own = resume.model_copy(
        update={"metadata": {**resume.metadata, **_options(output_schema=other)}}
    )

    done = await agent.run([answer("prose"), answer('{"n": 2}')], own)

    assert output_value(done) == {"n": 2}  # no kept output_text: prose was not an answer


async def test_options_kept_by_an_earlier_pause_are_not_used_for_a_later_one() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="a"))], _ask(_options(output_schema=SCHEMA))
    )
    await agent.run([answer('{"deleted": 1}')], resume_input("s1", [Decision.approve("c1")]))
    await agent.run([calls(call("c2", "delete_file", path="b"))], _ask())  # no options

    done = await agent.run([answer("done, untyped")], resume_input("s1", [Decision.approve("c2")]))

    assert done.exit_reason == "complete" and done.message.root == "done, untyped"


async def test_a_pause_of_an_input_without_options_keeps_nothing() -> None:
    agent = _Agent()
    paused = await agent.run([calls(call("c1", "delete_file", path="a"))], _ask())
    assert not any(
        isinstance(e, WriteMemoryEffect) and e.key == PAUSED_OPTIONS_KEY for e in paused.effects
    )


async def test_a_kept_record_another_program_spoiled_stops_the_resume_naming_it() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="a"))], _ask(_options(output_schema=SCHEMA))
    )
    await agent.store.write(SESSION, PAUSED_OPTIONS_KEY, ["not", "a", "record"])

    with pytest.raises(DispatchFailed) as failed:
        await agent.run([answer("never")], resume_input("s1", [Decision.approve("c1")]))
    assert isinstance(failed.value.__cause__, NonRetryableError)
    assert "the options kept for the pause of session 's1' must be an object" in str(failed.value)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("write_memory", {"scope": "session:s1", "key": PAUSED_OPTIONS_KEY, "value": {}}),
        ("delete_memory", {"scope": "session:s1", "key": PAUSED_OPTIONS_KEY}),
        ("read_memory", {"scope": "session:s1", "key": PAUSED_OPTIONS_KEY}),
    ],
)
async def test_a_model_can_neither_lift_nor_read_the_kept_options(
    name: str, arguments: dict[str, JsonValue]
) -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="a"))],
        _ask(_options(usage_limits={"tool_calls": 2})),
    )
    kept = await agent.store.read(SESSION, PAUSED_OPTIONS_KEY)

    done = await agent.run(
        [calls(call("m1", name, **arguments)), answer("tried")],
        resume_input("s1", [Decision.approve("c1")]),
        effect_policy=EffectPolicy(grants=["*"]),
    )

    told = agent.model.requests[1].messages[-1].content[0]
    assert isinstance(told, ToolResultPart) and told.is_error
    assert "the options a turn paused for approval keeps for its resume" in told.content
    assert not any(
        isinstance(e, WriteMemoryEffect) and e.key == PAUSED_OPTIONS_KEY for e in done.effects
    )
    assert await agent.store.read(SESSION, PAUSED_OPTIONS_KEY) == kept


async def test_a_resume_carrying_only_other_options_still_gets_the_kept_ones() -> None:
    agent = _Agent()
    await agent.run(
        [calls(call("c1", "delete_file", path="old.log"))], _ask(_options(output_schema=SCHEMA))
    )
    resume = resume_input("s1", [Decision.approve("c1")])
    assert isinstance(resume.metadata, dict)
    other = resume.model_copy(update={"metadata": {**resume.metadata, **_options(pin=False)}})

    done = await agent.run([answer('{"deleted": 1}')], other)

    assert output_value(done) == {"deleted": 1}


async def test_a_streamed_pause_declares_the_kept_options_once_before_the_history() -> None:
    store = InMemoryStore()
    config = NeuronTurnConfig(model="test-model", approval=ApprovalPolicy.of(["delete_file"]))
    model = ScriptedProvider([calls(call("c1", "delete_file", path="a"))])
    turn = NeuronTurn(model, tools=ToolRegistry([delete_file]), state=store, config=config)

    events = [e async for e in turn.stream(_ask(_options(output_schema=SCHEMA)))]

    declared = [e.effect for e in events if isinstance(e, EffectDeclared)]
    done = next(e for e in events if isinstance(e, TurnDone))
    assert declared == list(done.output.effects)  # each once, in the output's order
    kept = [e for e in declared if isinstance(e, WriteMemoryEffect)]
    assert [e.key for e in kept] == [PAUSED_OPTIONS_KEY]
    assert declared.index(kept[0]) == len(declared) - 2  # the history append comes last
