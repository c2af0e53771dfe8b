"""Session history: read through the StateReader; the turn's new messages appended by one effect."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from layer0 import (
    ContextAssemblyError,
    CustomBlock,
    NonRetryableError,
    RetryableError,
    Scope,
    SearchResult,
    SessionScope,
    StateError,
    TurnConfig,
    WriteMemoryEffect,
)
from layer0.testing import InMemoryStore
from neuron_turn import TextPart, ThinkingPart, ToolUsePart
from neuron_turn.testing import text_response

from .support import TRUSTING, answer, appended, ask, build, call, calls

SESSION = SessionScope(id="s1")


async def test_history_is_read_through_the_state_reader_and_sent_before_the_new_message() -> None:
    store = InMemoryStore()
    earlier = [
        {"role": "user", "content": "my name is Ada"},
        {"role": "assistant", "content": "Hello Ada"},
    ]
    await store.write(SESSION, "messages", earlier)
    turn, provider = build([answer("Ada")], state=store)
    await turn.execute(ask("what is my name?", session="s1"))
    messages = provider.requests[0].messages
    assert [(m.role, m.content) for m in messages] == [
        ("user", [TextPart("my name is Ada")]),
        ("assistant", [TextPart("Hello Ada")]),
        ("user", [TextPart("what is my name?")]),
    ]


async def test_no_session_means_no_history_read_and_no_history_effect() -> None:
    store = InMemoryStore()
    await store.write(SESSION, "messages", "not even a list")
    turn, provider = build([answer("ok")], state=store)
    output = await turn.execute(ask())
    assert len(provider.requests[0].messages) == 1
    assert output.effects == []


async def test_history_append_comes_last_holding_only_this_turns_messages() -> None:
    store = InMemoryStore()
    await store.write(SESSION, "messages", [{"role": "user", "content": "earlier"}])
    script = [
        calls(call("c1", "write_memory", scope="global", key="k", value=1)),
        answer("done"),
    ]
    turn, _ = build(script, state=store, config=TRUSTING)
    output = await turn.execute(ask("now", session="s1"))
    first, _ = output.effects
    assert isinstance(first, WriteMemoryEffect) and first.scope == "global"
    append = appended(output)
    assert append.session == "s1" and append.expected_length is None
    assert [m["role"] for m in append.messages] == ["user", "assistant", "user", "assistant"]  # type: ignore[call-overload,index]
    assert append.messages[0] == {"role": "user", "content": "now"}
    assert append.messages[-1] == {"role": "assistant", "content": "done"}


async def test_each_execution_appends_under_its_own_turn_id() -> None:
    turn, _ = build([answer("one"), answer("two")])
    first = appended(await turn.execute(ask("a", session="s1")))
    second = appended(await turn.execute(ask("a", session="s1")))
    assert first.turn_id != second.turn_id


async def test_session_conflict_fail_puts_the_length_read_in_the_append() -> None:
    store = InMemoryStore()
    await store.write(SESSION, "messages", [{"role": "user", "content": "earlier"}] * 3)
    turn, _ = build([answer("one")], state=store)
    output = await turn.execute(ask(session="s1", config=TurnConfig(session_conflict="fail")))
    assert appended(output).expected_length == 3


async def test_compaction_does_not_drop_this_turns_messages_from_the_append() -> None:
    from neuron_turn import NeuronTurnConfig, SlidingWindow

    script = [calls(call(f"c{i}", "add", a=i, b=1)) for i in range(3)] + [answer("done")]
    turn, _ = build(script, config=NeuronTurnConfig(model="m", context_limit=1))
    turn.context = SlidingWindow(max_messages=2)
    output = await turn.execute(ask("go", session="s1"))
    roles = [m["role"] for m in appended(output).messages]  # type: ignore[call-overload,index]
    assert roles == ["user", *["assistant", "user"] * 3, "assistant"]


async def test_history_appended_by_one_turn_is_read_by_the_next() -> None:
    store = InMemoryStore()
    turn, provider = build([answer("one"), answer("two")], state=store)
    first = await turn.execute(ask("a", session="s1"))
    await store.append_history(appended(first))
    await turn.execute(ask("b", session="s1"))
    roles_texts = [(m.role, m.content[0]) for m in provider.requests[1].messages]
    assert roles_texts == [
        ("user", TextPart("a")),
        ("assistant", TextPart("one")),
        ("user", TextPart("b")),
    ]


async def test_thinking_parts_survive_the_history_round_trip() -> None:
    store = InMemoryStore()
    thought = ThinkingPart("let me think", signature="sig-123")
    response = text_response("x")
    response = type(response)(
        content=(thought, ToolUsePart("c1", "add", {"a": 1, "b": 1})),
        stop_reason="tool_use",
        usage=response.usage,
        cost=response.cost,
    )
    turn, provider = build([response, answer("2"), answer("again")], state=store)
    output = await turn.execute(ask("go", session="s1"))
    await store.append_history(appended(output))
    await turn.execute(ask("more", session="s1"))
    assistant = provider.requests[2].messages[1]
    assert assistant.content[0] == thought


@pytest.mark.parametrize(
    ("stored", "problem"),
    [
        ({"role": "user"}, "list"),
        ([{"role": "robot", "content": "x"}], "0.role"),
        ([{"role": "user", "content": {"not": "content"}}], "0.content"),
        ([{"role": "user"}], "0.content"),
    ],
)
async def test_history_that_does_not_parse_raises_naming_session_and_problem(
    stored: JsonValue, problem: str
) -> None:
    store = InMemoryStore()
    await store.write(SESSION, "messages", stored)
    turn, provider = build([answer("never")], state=store)
    with pytest.raises(ContextAssemblyError) as exc:
        await turn.execute(ask(session="s1"))
    assert "'s1'" in str(exc.value) and problem in str(exc.value)
    assert provider.requests == []


async def test_unknown_custom_block_in_history_is_sent_as_its_json_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryStore()
    block = CustomBlock(content_type="audio", data={"codec": "opus"})
    content = [block.model_dump(mode="json")]
    await store.write(SESSION, "messages", [{"role": "user", "content": content}])
    turn, provider = build([answer("ok")], state=store)
    await turn.execute(ask(session="s1"))
    sent = provider.requests[0].messages[0].content[0]
    assert isinstance(sent, TextPart) and '"audio"' in sent.text
    assert "custom content block 'audio'" in caplog.text


class _FailingReader:
    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        raise OSError("database is locked")

    async def list(self, scope: Scope, prefix: str) -> list[str]:
        return []

    async def search(self, scope: Scope, query: str, limit: int) -> list[SearchResult]:
        return []


async def test_state_reader_that_raises_becomes_a_retryable_error() -> None:
    turn, _ = build([answer("never")], state=_FailingReader())
    with pytest.raises(RetryableError, match="database is locked") as exc:
        await turn.execute(ask(session="s1"))
    assert isinstance(exc.value.__cause__, OSError)


async def test_exit_by_limit_still_writes_the_history() -> None:
    turn, _ = build([calls(call("c1", "add", a=1, b=2))], state=InMemoryStore())
    output = await turn.execute(ask(session="s1", config=TurnConfig(max_turns=1)))
    assert output.exit_reason == "max_turns"
    history = appended(output).messages
    assert [m["role"] for m in history] == ["user", "assistant", "user"]  # type: ignore[call-overload,index]


class _BrokenFileReader(_FailingReader):
    async def read(self, scope: Scope, key: str) -> JsonValue | None:
        raise StateError("state database 'x.db' is corrupt; restore it from a backup")


async def test_a_state_error_reading_the_history_is_not_retryable() -> None:
    turn, _ = build([answer("never")], state=_BrokenFileReader())
    with pytest.raises(NonRetryableError, match="restore it from a backup") as exc:
        await turn.execute(ask(session="s1"))
    assert isinstance(exc.value.__cause__, StateError)
