"""Memory read tools on Temporal: a worker's turn reads the worker's store, within its grant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import JsonValue
from temporalio.testing import WorkflowEnvironment

from layer0 import CustomScope, EffectPolicy, SessionScope, TurnConfig, TurnInput
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn, NeuronTurnConfig, ToolResultPart, ToolUsePart
from neuron_turn.testing import ScriptedProvider, text_response, tool_call_response

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

FACT = "The launch window opens at dawn on Tuesday."
SECRET = "the vault code is 7741"


def results(provider: ScriptedProvider, request: int) -> list[ToolResultPart]:
    """The tool results the model got in request number `request` (0-based)."""
    last = provider.requests[request].messages[-1]
    return [part for part in last.content if isinstance(part, ToolResultPart)]


def parsed(part: ToolResultPart) -> dict[str, JsonValue]:
    assert not part.is_error, part.content
    data = json.loads(part.content)
    assert isinstance(data, dict)
    return data


def scope_choices(provider: ScriptedProvider, request: int, tool: str) -> JsonValue:
    [schema] = [t.input_schema for t in provider.requests[request].tools if t.name == tool]
    properties = schema["properties"]
    assert isinstance(properties, dict) and isinstance(properties["scope"], dict)
    return properties["scope"].get("enum")


async def test_memory_written_in_one_turn_is_read_listed_and_found_in_the_next_through_the_workflow(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    provider = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart(
                    "w1", "write_memory", {"scope": "global", "key": "launch", "value": FACT}
                ),
                ToolUsePart("w2", "write_memory", {"key": "checklist", "value": ["fuel", "crew"]}),
            ),
            text_response("noted"),
            tool_call_response(
                ToolUsePart("r1", "read_memory", {"scope": "global", "key": "launch"}),
                ToolUsePart("r2", "list_memory", {}),
                ToolUsePart("r3", "search_memory", {"scope": "global", "query": "dawn"}),
                ToolUsePart("r4", "read_memory", {"scope": "global", "key": "landing"}),
            ),
            text_response("at dawn, with fuel and crew"),
        ]
    )
    # The caller grants writing and reading global memory, through the workflow's input.
    grant = TurnConfig(effect_policy=EffectPolicy.of(["global", "read:global"]))
    async with SqliteStore(tmp_path / "state.db") as store:
        turn = NeuronTurn(provider, state=store, config=NeuronTurnConfig(model="scripted"))
        async with hosting(dev_env, {"a": turn}, store) as orchestrator:
            first = await orchestrator.dispatch(
                "a", TurnInput(message="remember", trigger="user", session="s1", config=grant)
            )
            written = await store.read("global", "launch")
            second = await orchestrator.dispatch(
                "a", TurnInput(message="when?", trigger="user", session="s1", config=grant)
            )

    assert first.message.as_text() == "noted"
    assert written == FACT  # applied to the worker's store by the workflow, before turn two
    assert second.message.as_text() == "at dawn, with fuel and crew"
    assert scope_choices(provider, 2, "read_memory") == ["session", "global"]
    read, listed, found, missing = results(provider, 3)
    assert parsed(read) == {"scope": "global", "key": "launch", "found": True, "value": FACT}
    # The session's own memory, without its conversation history (`messages`).
    assert parsed(listed) == {"scope": "session", "prefix": "", "keys": ["checklist"]}
    search = parsed(found)
    assert search["query"] == "dawn"
    hits = search["results"]
    assert isinstance(hits, list) and len(hits) == 1 and isinstance(hits[0], dict)
    assert hits[0]["key"] == "launch"
    assert isinstance(hits[0]["snippet"], str) and "**dawn**" in hits[0]["snippet"]
    assert parsed(missing) == {"scope": "global", "key": "landing", "found": False}


async def test_a_read_outside_the_callers_grant_is_a_tool_error_and_the_turn_goes_on(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    provider = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart("r1", "read_memory", {"scope": "custom:vault", "key": "code"}),
                ToolUsePart("r2", "search_memory", {"scope": "session:other", "query": "vault"}),
                ToolUsePart("r3", "list_memory", {"scope": "global"}),
            ),
            text_response("I may not look there"),
        ]
    )
    # The agent itself would read anything; the caller grants reading global memory only.
    config = NeuronTurnConfig(model="scripted", effect_policy=EffectPolicy.everything())
    grant = TurnConfig(effect_policy=EffectPolicy.of(["read:global"]))
    async with SqliteStore(tmp_path / "state.db") as store:
        await store.write(CustomScope(name="vault"), "code", SECRET)
        await store.write(SessionScope(id="other"), "vault", SECRET)
        await store.write("global", "motto", "ad astra")
        turn = NeuronTurn(provider, state=store, config=config)
        async with hosting(dev_env, {"a": turn}, store) as orchestrator:
            result = await orchestrator.run(
                "a", TurnInput(message="peek", trigger="user", session="s2", config=grant)
            )

    assert result.output.exit_reason == "complete"
    assert result.output.message.as_text() == "I may not look there"
    vault, other, allowed = results(provider, 1)
    for part, named in ((vault, "custom:vault"), (other, "session:other")):
        assert part.is_error
        assert part.content.startswith(f"Refused: reading scope '{named}' is not granted")
        assert "7741" not in part.content
    assert parsed(allowed) == {"scope": "global", "prefix": "", "keys": ["motto"]}
    assert scope_choices(provider, 0, "read_memory") == ["session", "global"]
