"""layer0.testing: the public test helpers satisfy their Protocols and behave."""

from __future__ import annotations

from moneyed import Money

import layer0
from layer0.testing import EchoTurn, InMemoryStore, RecordingHook


def test_helpers_satisfy_their_protocols() -> None:
    assert isinstance(EchoTurn(), layer0.Turn)
    assert isinstance(InMemoryStore(), layer0.StateStore)
    assert isinstance(InMemoryStore(), layer0.StateReader)
    assert isinstance(RecordingHook(), layer0.Hook)


async def test_echo_turn_answers_with_its_input_and_exits_complete() -> None:
    blocks = layer0.Content([layer0.TextBlock(text="hello")])
    output = await EchoTurn().execute(layer0.TurnInput(message=blocks, trigger="user"))
    assert output.message == blocks
    assert output.exit_reason == "complete"
    assert output.effects == []


async def test_store_reads_what_it_wrote_per_scope_and_deletes_quietly() -> None:
    store = InMemoryStore()
    session, workflow = layer0.SessionScope(id="a"), layer0.WorkflowScope(id="a")
    await store.write(session, "k", {"n": 1})
    assert await store.read(session, "k") == {"n": 1}
    assert await store.read(workflow, "k") is None
    await store.delete(session, "k")
    await store.delete(session, "k")
    assert await store.read(session, "k") is None


async def test_store_copies_values_so_callers_cannot_mutate_them() -> None:
    store = InMemoryStore()
    value: dict[str, layer0.Json] = {"items": [1]}
    await store.write("global", "k", value)
    value["items"] = []
    read = await store.read("global", "k")
    assert read == {"items": [1]}


async def test_store_lists_by_prefix_sorted() -> None:
    store = InMemoryStore()
    for key in ("notes/b", "notes/a", "other"):
        await store.write("global", key, 1)
    assert await store.list("global", "notes/") == ["notes/a", "notes/b"]


async def test_store_search_scores_by_occurrences_and_respects_limit() -> None:
    store = InMemoryStore()
    await store.write("global", "one", "apple pie")
    await store.write("global", "three", "apple apple APPLE")
    await store.write("global", "none", "pear")
    hits = await store.search("global", "apple", 10)
    assert [hit.key for hit in hits] == ["three", "one"]
    assert hits[0].score == 3.0 and hits[0].snippet is not None
    assert len(await store.search("global", "apple", 1)) == 1


async def test_recording_hook_records_contexts_and_returns_its_action() -> None:
    hook = RecordingHook([layer0.HookPoint.EXIT_CHECK], action=layer0.Halt(reason="stop"))
    ctx = layer0.HookContext(
        point=layer0.HookPoint.EXIT_CHECK,
        tokens_used=3,
        cost=Money("0.01", "USD"),
        turns_completed=1,
        elapsed=5,
    )
    assert await hook.on_event(ctx) == layer0.Halt(reason="stop")
    assert hook.seen == [ctx]
    assert hook.points == {layer0.HookPoint.EXIT_CHECK}
