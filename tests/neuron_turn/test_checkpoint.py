"""`checkpointing`: after each tool round, the turn so far, for a runner that may be lost."""

from __future__ import annotations

from layer0 import PartialTurn, SessionScope
from layer0.testing import InMemoryStore
from neuron_turn import INTERRUPTED, checkpointing

from .support import answer, appended, ask, call, calls
from .test_continuation import keep, sender

SESSION = SessionScope(id="s1")


async def test_each_tool_round_hands_the_turn_so_far_and_its_continuation_goes_on_from_it() -> None:
    store = InMemoryStore()
    script = [
        calls(call("c1", "send", text="one")),
        calls(call("c2", "send", text="two")),
        answer("sent both"),
        answer("sent both, again"),
    ]
    turn, provider, counter = sender(script, store)
    taken: list[PartialTurn] = []
    with checkpointing(taken.append):
        output = await turn.execute(ask("send two", session="s1"))

    assert output.message.as_text() == "sent both"
    first, second = taken
    assert first.output.exit_reason == INTERRUPTED == second.output.exit_reason
    roles = [m["role"] for m in appended(second.output).messages]  # type: ignore[index,call-overload]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert [r.name for r in first.output.metadata.tools_called] == ["send"]
    assert second.output.metadata.turns_used == 2
    # Had the run been lost after its second round, its runner would go on from there.
    await keep(store, second)
    later = await turn.execute(second.continuation)
    assert later.message.as_text() == "sent both, again"
    assert counter.runs == 2  # each send once: the continuation ran none again
    assert len(provider.requests[-1].messages) == 5


async def test_a_turn_that_could_not_be_continued_hands_no_checkpoint() -> None:
    # No state to read a kept part back from: a lost run is run again whole.
    turn, _, counter = sender([calls(call("c1", "send", text="x")), answer("sent")], None)
    taken: list[PartialTurn] = []
    with checkpointing(taken.append):
        output = await turn.execute(ask("send x", session="s1"))

    assert output.message.as_text() == "sent" and counter.runs == 1
    assert taken == []


async def test_no_checkpoint_is_taken_outside_a_checkpointing_block() -> None:
    store = InMemoryStore()
    taken: list[PartialTurn] = []
    with checkpointing(taken.append):
        pass
    turn, _, _ = sender([calls(call("c1", "send", text="x")), answer("sent")], store)
    await turn.execute(ask("send x", session="s1"))

    assert taken == []
