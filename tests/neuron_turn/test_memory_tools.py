"""Memory read tools: answered from the turn's state reader, within read grants, bounded."""

from __future__ import annotations

import builtins
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import (
    CustomScope,
    EffectPolicy,
    Scope,
    SearchResult,
    SessionScope,
    TurnConfig,
)
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolResultPart, ToolUsePart
from neuron_turn.loop.memory_tools import MemoryLimits
from neuron_turn.testing import ScriptedProvider

from .support import answer, ask, build, call, calls

MEMORY_TOOLS = ["read_memory", "list_memory", "search_memory"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    async with SqliteStore(tmp_path / "state.db") as opened:
        yield opened


def results(provider: ScriptedProvider, request: int) -> list[ToolResultPart]:
    """The tool results the model got in request number `request`."""
    last = provider.requests[request].messages[-1]
    return [p for p in last.content if isinstance(p, ToolResultPart)]


def result_json(part: ToolResultPart) -> dict[str, JsonValue]:
    assert not part.is_error, part.content
    data = json.loads(part.content)
    assert isinstance(data, dict)
    return data


def offered(provider: ScriptedProvider) -> list[str]:
    return [tool.name for tool in provider.requests[0].tools]


def scope_schema(provider: ScriptedProvider, tool: str) -> dict[str, JsonValue]:
    """The `scope` property of `tool`'s schema as the model was offered it."""
    [schema] = [t.input_schema for t in provider.requests[0].tools if t.name == tool]
    properties = schema["properties"]
    assert isinstance(properties, dict) and isinstance(properties["scope"], dict)
    return properties["scope"]


async def test_a_fact_written_in_one_turn_is_found_by_search_memory_in_a_later_turn(
    store: SqliteStore,
) -> None:
    fact = "The customer's favourite colour is teal."
    provider = ScriptedProvider(
        [
            calls(call("w", "write_memory", key="preferences", value=fact)),
            answer("noted"),
            calls(call("s", "search_memory", query="which colours does she like")),
            calls(call("r", "read_memory", key="preferences")),
            answer("teal"),
        ]
    )
    orchestrator = LocalOrchestrator({"assistant": NeuronTurn(provider, state=store)}, store)
    await orchestrator.dispatch("assistant", ask("remember: teal", session="s1"))
    output = await orchestrator.dispatch("assistant", ask("what colour?", session="s1"))
    assert output.message.as_text() == "teal"
    found = result_json(results(provider, 3)[0])
    assert found["scope"] == "session" and found["query"] == "which colours does she like"
    hits = found["results"]
    assert isinstance(hits, list) and len(hits) == 1
    hit = hits[0]
    assert isinstance(hit, dict) and hit["key"] == "preferences"
    assert isinstance(hit["snippet"], str) and "**colour**" in hit["snippet"]
    assert result_json(results(provider, 4)[0]) == {
        "scope": "session",
        "key": "preferences",
        "found": True,
        "value": fact,
    }


async def test_a_scope_not_granted_for_reading_is_a_tool_error_naming_it(
    store: SqliteStore,
) -> None:
    await store.write(SessionScope(id="s1"), "secret", "the launch code is 1234")
    await store.write("global", "motto", "launch codes are secret")
    attempts = [
        ("read_memory", {"scope": "session:s1", "key": "secret"}, "'session:s1'"),
        ("search_memory", {"scope": "session:s1", "query": "launch code"}, "'session:s1'"),
        ("list_memory", {"scope": "global"}, "'global'"),
        ("read_memory", {"scope": "workflow:wf", "key": "k"}, "'workflow:wf'"),
        ("search_memory", {"scope": "agent:wf/a", "query": "x"}, "'agent:wf/a'"),
        ("list_memory", {"scope": "tenant:acme"}, "'custom:tenant:acme'"),
    ]
    script = [calls(*(call(f"c{i}", n, **a) for i, (n, a, _) in enumerate(attempts)))]
    # Granting writes to global does not grant reading it.
    grant = EffectPolicy.of(["global"])
    config = NeuronTurnConfig(model="m", effect_policy=grant, max_consecutive_failures=99)
    turn, provider = build([*script, answer("nothing")], state=store, config=config)
    output = await turn.execute(ask("peek", session="s2"))
    assert output.message.as_text() == "nothing"
    for (_, _, named), part in zip(attempts, results(provider, 1), strict=True):
        assert part.is_error
        assert part.content.startswith(f"Refused: reading scope {named} is not granted")
        assert "1234" not in part.content and "secret" not in part.content.split("granted")[0]
    assert scope_schema(provider, "search_memory")["enum"] == ["session"]


async def test_a_read_grant_opens_that_scope_and_the_schema_names_it(store: SqliteStore) -> None:
    await store.write(SessionScope(id="s1"), "notes", {"todo": ["call Ann"]})
    await store.write("global", "motto", "be kind")
    script = [
        calls(
            call("a", "read_memory", scope="session:s1", key="notes"),
            call("b", "list_memory", scope="global"),
        ),
        answer("ok"),
    ]
    policy = EffectPolicy.of(["read:session:s1", "read:global"])
    turn, provider = build(script, state=store, config=NeuronTurnConfig(model="m"))
    await turn.execute(ask(session="s2", config=TurnConfig(effect_policy=policy)))
    read, listed = results(provider, 1)
    assert result_json(read)["value"] == {"todo": ["call Ann"]}
    assert result_json(listed) == {"scope": "global", "prefix": "", "keys": ["motto"]}
    assert scope_schema(provider, "read_memory")["enum"] == ["session", "session:s1", "global"]


HOSTILE: list[tuple[str, JsonValue, str]] = [
    ("read_memory", {"key": 5}, "key"),
    ("read_memory", {}, "key: Field required"),
    ("read_memory", {"key": ""}, "key"),
    ("read_memory", {"key": "k", "scope": ["global"]}, "scope"),
    ("read_memory", {"key": "k", "scope": "x" * 100_000}, "scope"),
    ("read_memory", ["not", "an", "object"], "are not a JSON object"),
    ("read_memory", {"key": "k", "rm": "-rf"}, "rm: Extra inputs"),
    ("list_memory", {"limit": 10**12}, "limit must be at most 20"),
    ("list_memory", {"limit": 0}, "limit"),
    ("list_memory", {"limit": "3"}, "limit"),
    ("list_memory", {"limit": True}, "limit"),
    ("search_memory", {"query": ""}, "query"),
    ("search_memory", {"query": None}, "query"),
    ("search_memory", {"query": "q", "limit": 21}, "limit must be at most 20"),
    ("search_memory", {"query": "q" * 10_000}, "query"),
    ("read_memory", {"key": "messages"}, "conversation history"),
    ("list_memory", {"scope": "\x00session"}, r"Refused: reading scope 'custom:\x00session'"),
    # A lone surrogate arrives as U+FFFD (the wire cannot carry one): a scope not granted.
    ("list_memory", {"scope": "\ud800"}, "Refused: reading scope 'custom:\ufffd'"),
]


async def test_hostile_arguments_are_tool_errors_and_the_turn_goes_on(store: SqliteStore) -> None:
    script = [
        calls(*(ToolUsePart(f"c{i}", name, args) for i, (name, args, _) in enumerate(HOSTILE))),
        answer("still here"),
    ]
    config = NeuronTurnConfig(model="m", max_consecutive_failures=99)
    turn, provider = build(script, state=store, config=config)
    output = await turn.execute(ask(session="s"))
    assert output.exit_reason == "complete" and output.message.as_text() == "still here"
    for (name, _, expected), part in zip(HOSTILE, results(provider, 1), strict=True):
        assert part.is_error, (name, part.content)
        assert expected in part.content, (name, part.content)
        assert len(part.content) < 2000


async def test_results_are_bounded_and_say_what_was_cut(store: SqliteStore) -> None:
    for n in range(30):
        await store.write(SessionScope(id="s"), f"note/{n:02}", f"note number {n} about otters")
    await store.write(SessionScope(id="s"), "big", "é" * 5000)
    script = [
        calls(
            call("l", "list_memory", prefix="note/"),
            call("b", "read_memory", key="big"),
            call("s", "search_memory", query="otters", limit=3),
            call("x", "list_memory", prefix="note/", limit=30),
        ),
        answer("ok"),
    ]
    limits = MemoryLimits(max_entries=10, max_value_bytes=1000)
    config = NeuronTurnConfig(model="m", memory_limits=limits)
    turn, provider = build(script, state=store, config=config)
    await turn.execute(ask(session="s"))
    listed, big, found, too_many = results(provider, 1)
    listing = result_json(listed)
    assert listing["keys"] == [f"note/{n:02}" for n in range(10)]
    assert listing["truncated"] == "showing 10 of 30 keys; ask with a longer prefix"
    value = result_json(big)
    assert "value" not in value and value["truncated"] == (
        "the value is 10002 bytes of JSON; only its first 1000 are shown"
    )
    start = value["value_json_start"]
    assert isinstance(start, str) and start.startswith('"éé') and len(start.encode()) <= 1000
    search = result_json(found)
    assert isinstance(search["results"], list) and len(search["results"]) == 3
    assert search["truncated"] == "more matches exist; showing the best 3"
    assert too_many.is_error and "limit must be at most 10" in too_many.content


async def test_the_conversation_history_is_not_memory(store: SqliteStore) -> None:
    provider = ScriptedProvider(
        [
            answer("first"),
            calls(call("l", "list_memory"), call("s", "search_memory", query="hello")),
            answer("ok"),
        ]
    )
    orchestrator = LocalOrchestrator({"a": NeuronTurn(provider, state=store)}, store)
    await orchestrator.dispatch("a", ask("hello there", session="s"))
    assert await store.read(SessionScope(id="s"), "messages") is not None
    await orchestrator.dispatch("a", ask("again", session="s"))
    listed, found = results(provider, 2)
    assert result_json(listed)["keys"] == []
    assert result_json(found)["results"] == []


async def test_memory_tools_are_offered_only_with_a_state_reader_and_as_configured(
    store: SqliteStore,
) -> None:
    turn, provider = build([answer("a")])
    await turn.execute(ask(session="s"))
    assert not set(MEMORY_TOOLS) & set(offered(provider))
    turn, provider = build([answer("a")], state=store)
    await turn.execute(ask(session="s"))
    assert offered(provider)[-3:] == MEMORY_TOOLS
    turn, provider = build([answer("a")], state=store)
    await turn.execute(ask())  # no session, no read grant: nothing to read
    assert not set(MEMORY_TOOLS) & set(offered(provider))
    config = NeuronTurnConfig(model="m", memory_tools=False)
    turn, provider = build([answer("a")], state=store, config=config)
    await turn.execute(ask(session="s"))
    assert not set(MEMORY_TOOLS) & set(offered(provider))
    turn, provider = build([answer("a")], state=store)
    await turn.execute(ask(session="s", config=TurnConfig(allowed_tools=["read_memory"])))
    assert offered(provider) == ["read_memory"]


class _BrokenStore:
    async def read(self, scope: Scope, key: str) -> JsonValue:
        if key == "messages":
            return None  # the turn's own history read works; memory reads fail
        raise OSError("disk I/O error")

    async def list(self, scope: Scope, prefix: str) -> builtins.list[str]:
        raise RuntimeError("store closed")

    async def search(self, scope: Scope, query: str, limit: int) -> list[SearchResult]:
        return [SearchResult(key="k", score=1.0, snippet=None)]


async def test_a_store_that_raises_reads_as_an_error_naming_the_failure() -> None:
    script = [calls(call("r", "read_memory", key="k"), call("l", "list_memory")), answer("ok")]
    turn, provider = build(script, state=_BrokenStore())
    output = await turn.execute(ask(session="s"))
    assert output.message.as_text() == "ok"
    read, listed = results(provider, 1)
    assert read.is_error and "failed: OSError: disk I/O error" in read.content
    assert listed.is_error and "failed: RuntimeError: store closed" in listed.content


async def test_a_custom_scope_granted_by_wildcard_is_read_as_written(store: SqliteStore) -> None:
    await store.write(CustomScope(name="team"), "plan", "ship friday")
    script = [calls(call("r", "read_memory", scope="custom:team", key="plan")), answer("ok")]
    policy = EffectPolicy.of(["read:custom:*"])
    turn, provider = build(script, state=store, config=NeuronTurnConfig(effect_policy=policy))
    await turn.execute(ask())
    assert result_json(results(provider, 1)[0])["value"] == "ship friday"
    assert "enum" not in scope_schema(provider, "list_memory")


async def test_a_store_that_raises_is_logged_for_the_operator_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    script = [calls(call("r", "read_memory", key="k")), answer("ok")]
    turn, _ = build(script, state=_BrokenStore())
    with caplog.at_level(logging.WARNING, logger="neuron_turn.memory"):
        await turn.execute(ask(session="s"))
    (record,) = [r for r in caplog.records if r.name == "neuron_turn.memory"]
    assert record.getMessage() == "memory read in scope 'session' failed"
    assert record.exc_info is not None and isinstance(record.exc_info[1], OSError)
