"""Effect-tool calls a hostile model makes that a store or an orchestrator would refuse.

Each is answered as a tool error the model reads, with nothing declared, so
that no store refusing it later fails the turn's memory effects, and with them
the turn's own history.
"""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from layer0 import CustomEffect, EffectPolicy, HandoffEffect
from layer0.testing import InMemoryStore
from neuron_turn import NeuronTurnConfig
from neuron_turn.cli._sessions import INDEX_PREFIX, RUNS_PREFIX, record_run

from .support import TRUSTING, answer, ask, build, call, calls

# A key with NUL: PostgresStore refuses it. A key or scope this long: PostgresStore
# indexes scope and key together and refuses an entry past about 2.7 kB.
EMOJI = "\U0001f600"
UNSTORABLE: list[tuple[str, dict[str, JsonValue], str]] = [
    ("write_memory", {"key": "a\x00b", "value": 1}, "NUL"),
    ("delete_memory", {"key": "a\x00b"}, "NUL"),
    ("write_memory", {"key": "k" * 513, "value": 1}, "512 bytes"),
    ("write_memory", {"key": EMOJI * 200, "value": 1}, "512 bytes"),
    ("delete_memory", {"key": "k" * 3000}, "512 bytes"),
    ("write_memory", {"scope": "custom:" + EMOJI * 512, "key": "k", "value": 1}, "512 bytes"),
    ("write_memory", {"scope": "custom:a\x01b", "key": "k", "value": 1}, "control"),
    ("delete_memory", {"scope": "session:" + "s" * 600, "key": "k"}, "512 bytes"),
]


@pytest.mark.parametrize(("name", "arguments", "why"), UNSTORABLE)
async def test_a_memory_key_or_scope_no_store_can_keep_is_refused_and_nothing_declared(
    name: str, arguments: dict[str, JsonValue], why: str
) -> None:
    turn, provider = build([calls(call("c1", name, **arguments)), answer("ok")], config=TRUSTING)
    output = await turn.execute(ask(session="s"))
    assert [effect.type for effect in output.effects] == ["custom"]  # its history only
    result = provider.requests[1].messages[-1].content[0]
    assert result.is_error is True  # type: ignore[union-attr]
    assert name in result.content and why in result.content  # type: ignore[union-attr]


async def test_a_memory_key_and_scope_at_the_bounds_are_declared() -> None:
    script = [
        calls(
            call("c1", "write_memory", scope="custom:" + "s" * 505, key="k" * 512, value=1),
            call("c2", "write_memory", key=EMOJI * 128, value=2),
        ),
        answer("ok"),
    ]
    turn, _ = build(script, config=TRUSTING)
    output = await turn.execute(ask(session="s"))
    assert [effect.type for effect in output.effects] == ["write_memory", "write_memory", "custom"]


async def test_a_second_handoff_in_one_answer_is_refused_and_the_first_is_kept() -> None:
    script = [
        calls(
            call("c1", "handoff", agent="closer", state=None),
            call("c2", "handoff", agent="other", state=None),
        ),
    ]
    turn, _ = build(script, config=TRUSTING)
    output = await turn.execute(ask(session="s"))
    assert output.effects[:-1] == [HandoffEffect(agent="closer", state=None)]
    assert isinstance(output.effects[-1], CustomEffect)
    history = output.effects[-1].data["messages"]  # type: ignore[index,call-overload]
    (first, second) = history[-1]["content"]  # type: ignore[index,call-overload]
    assert first["is_error"] is False
    assert second["is_error"] is True and "'closer'" in second["content"]


async def test_the_command_lines_index_of_sessions_is_not_memory_to_read_or_change() -> None:
    # The command line keeps every session's opening words under global keys: a
    # model granted global memory must not read other conversations there, nor
    # rewrite or drop their entries.
    store = InMemoryStore()
    await record_run(store, "other", "my bank password is hunter2")
    index = f"{INDEX_PREFIX}other"
    (run,) = await store.list("global", RUNS_PREFIX)
    script = [
        calls(
            call("c1", "list_memory", scope="global"),
            call("c2", "read_memory", scope="global", key=index),
            call("c3", "search_memory", scope="global", query="bank password"),
            call("c4", "write_memory", scope="global", key=index, value={"title": "forged"}),
            call("c5", "delete_memory", scope="global", key=run),
            call("c6", "write_memory", scope="global", key="note", value="mine"),
        ),
        answer("ok"),
    ]
    grants = EffectPolicy.of(["global", "read:global"])
    turn, provider = build(
        script,
        state=store,
        config=NeuronTurnConfig(effect_policy=grants, max_consecutive_failures=99),
    )
    output = await turn.execute(ask(session="s"))
    results = provider.requests[1].messages[-1].content
    shown = " ".join(r.content for r in results)  # type: ignore[union-attr]
    assert "hunter2" not in shown and "neuron-turn/" not in results[0].content  # type: ignore[union-attr]
    assert [r.is_error for r in results] == [False, True, False, True, True, False]  # type: ignore[union-attr]
    assert [e.type for e in output.effects] == ["write_memory", "custom"]


async def test_search_memory_finds_memory_past_many_index_entries_that_match() -> None:
    store = InMemoryStore()
    for _ in range(30):
        await record_run(store, "other", "a trip")
    await store.write("global", "note", "trip to Lisbon")
    script = [
        calls(call("c1", "search_memory", scope="global", query="trip", limit=1)),
        answer("ok"),
    ]
    grants = EffectPolicy.of(["read:global"])
    turn, provider = build(script, state=store, config=NeuronTurnConfig(effect_policy=grants))
    await turn.execute(ask(session="s"))
    (result,) = provider.requests[1].messages[-1].content
    assert '"key": "note"' in result.content  # type: ignore[union-attr]
