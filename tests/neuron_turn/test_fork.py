"""`fork_session`: a new session holding the first turns of another, the original kept.

Turns are run for real through the local orchestrator, on a SQLite state file
and on the in-memory store, with the offline providers of `neuron_turn.testing`.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue

from layer0 import (
    HISTORY_KEY,
    HistoryAppend,
    HistoryStore,
    SessionScope,
    TurnInput,
    TurnOutput,
)
from layer0.testing import InMemoryStore
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_tool import ToolRegistry, ToolReturn, image_block, tool
from neuron_turn import (
    AWAITING_APPROVAL,
    STANDING_KEY,
    TOOL_FILES_TYPE,
    ApprovalPolicy,
    Decision,
    ForkedSession,
    ForkError,
    ImagePart,
    NeuronTurn,
    NeuronTurnConfig,
    PendingCallsError,
    ProviderRequest,
    ProviderResponse,
    TargetExistsError,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    TurnsOutOfRangeError,
    UnknownSessionError,
    UnreadableHistoryError,
    fork_session,
    resume_input,
)
from neuron_turn.testing import FunctionProvider, ScriptedProvider, text_response

from .support import add, answer, calls

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)


@pytest.fixture(params=["sqlite", "memory"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[HistoryStore]:
    """A real SQLite state file, or the in-memory store."""
    if request.param == "memory":
        yield InMemoryStore()
        return
    async with SqliteStore(tmp_path / "state.db") as sqlite:
        yield sqlite


def _echo(request: ProviderRequest) -> ProviderResponse:
    last = request.messages[-1].content
    text = next((part.text for part in last if isinstance(part, TextPart)), "")
    return text_response(f"echo: {text}")


async def _talk(
    store: HistoryStore,
    session: str,
    *messages: str,
    provider: Any = None,
    tools: Sequence[Any] = (add,),
    config: NeuronTurnConfig | None = None,
) -> list[TurnOutput]:
    """Run one turn per message on `session`, through the local orchestrator."""
    turn = NeuronTurn(
        provider or FunctionProvider(_echo),
        tools=ToolRegistry(tools),
        state=store,
        config=config or NeuronTurnConfig(model="test-model"),
    )
    orchestrator = LocalOrchestrator({"agent": turn}, store)
    return [
        await orchestrator.dispatch(
            "agent", TurnInput(message=message, trigger="user", session=session)
        )
        for message in messages
    ]


async def _history(store: HistoryStore, session: str) -> JsonValue:
    return await store.read(SessionScope(id=session), HISTORY_KEY)


async def _keys(store: HistoryStore, session: str) -> list[str]:
    return await store.list(SessionScope(id=session), "")


async def test_a_fork_of_two_of_three_turns_goes_on_from_turn_two_while_the_original_keeps_three(
    store: HistoryStore,
) -> None:
    await _talk(store, "trip", "one", "two", "three")
    original = await _history(store, "trip")

    forked = await fork_session(store, "trip", "trip-b", turns=2)
    provider = FunctionProvider(_echo)
    await _talk(store, "trip-b", "four", provider=provider)

    assert forked == ForkedSession("trip-b", "trip", 2, 3, 4)
    sent = [(m.role, m.content) for m in provider.requests[0].messages]
    assert sent == [
        ("user", [TextPart("one")]),
        ("assistant", [TextPart("echo: one")]),
        ("user", [TextPart("two")]),
        ("assistant", [TextPart("echo: two")]),
        ("user", [TextPart("four")]),
    ]
    assert await _history(store, "trip") == original
    assert isinstance(original, list) and len(original) == 6


async def test_without_turns_every_turn_is_copied_message_for_message(store: HistoryStore) -> None:
    await _talk(store, "trip", "one", "two", "three")

    forked = await fork_session(store, "trip")

    assert (forked.turns, forked.source_turns, forked.messages) == (3, 3, 6)
    assert await _history(store, forked.session) == await _history(store, "trip")


async def test_a_fresh_id_is_made_for_each_fork_as_run_makes_them(store: HistoryStore) -> None:
    await _talk(store, "trip", "one")

    first, second = await fork_session(store, "trip"), await fork_session(store, "trip")

    assert first.session != second.session
    assert all(len(f.session) == 12 and int(f.session, 16) >= 0 for f in (first, second))


def _tool_rounds(rounds: int, total: int) -> list[ProviderResponse]:
    """A turn of `rounds` rounds of calls (ids reused, as models do), then an answer."""
    script = [calls(ToolUsePart("call_1", "add", {"a": n, "b": 1})) for n in range(rounds)]
    return [*script, answer(f"the answer is {total}")]


async def test_a_fork_never_cuts_inside_a_round_of_tool_calls(store: HistoryStore) -> None:
    script = [*_tool_rounds(1, 1), *_tool_rounds(2, 2), *_tool_rounds(3, 3)]
    await _talk(store, "sums", "first", "second", "third", provider=ScriptedProvider(script))
    history = await _history(store, "sums")
    assert isinstance(history, list) and len(history) == 3 * 2 + 2 * (1 + 2 + 3)

    ends = []
    for turns in (1, 2, 3):
        forked = await fork_session(store, "sums", turns=turns)
        copied = await _history(store, forked.session)
        assert isinstance(copied, list)
        ends.append(len(copied))
        assert copied == history[: len(copied)]
        assert copied[-1] == {"role": "assistant", "content": f"the answer is {turns}"}

    assert ends == [4, 10, 18]  # each turn: its message, its rounds, its answer


async def test_a_user_message_between_a_call_and_its_result_starts_no_turn(
    store: HistoryStore,
) -> None:
    call: JsonValue = {"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 1, "b": 2}}
    result: JsonValue = {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": "3",
        "is_error": False,
    }
    odd: list[JsonValue] = [
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": "a word in between"},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": "3"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "welcome"},
    ]
    await store.append_history(HistoryAppend(session="odd", turn_id="t", messages=odd))

    forked = await fork_session(store, "odd", turns=1)

    assert (forked.source_turns, forked.messages) == (2, 5)


@tool
async def snapshot() -> ToolReturn:
    """Take a picture of the screen."""
    return ToolReturn("here it is", files=[image_block(PIXEL)])


async def test_a_fork_holds_the_files_its_history_refers_to(store: HistoryStore) -> None:
    script = [calls(ToolUsePart("s1", "snapshot", {})), answer("a white pixel")]
    await _talk(
        store, "look", "what is on screen?", provider=ScriptedProvider(script), tools=[snapshot]
    )
    await _talk(store, "look", "and now?")

    forked = await fork_session(store, "look", turns=1)
    provider = FunctionProvider(_echo)
    await _talk(store, forked.session, "describe it again", provider=provider, tools=[snapshot])

    copied = await _history(store, forked.session)
    assert isinstance(copied, list) and copied[:4] == (await _history(store, "look"))[:4]  # type: ignore[index]
    [files] = [
        block
        for message in copied[:4]
        if isinstance(message, dict) and isinstance(message["content"], list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("content_type") == TOOL_FILES_TYPE
    ]
    assert base64.b64encode(PIXEL).decode() in str(files)
    [result] = [
        part
        for message in provider.requests[0].messages
        for part in message.content
        if isinstance(part, ToolResultPart)
    ]
    [image] = result.files
    assert isinstance(image, ImagePart) and image.media_type == "image/png"


APPROVED = NeuronTurnConfig(model="test-model", approval=ApprovalPolicy.of(["add"]))


async def _paused(store: HistoryStore, session: str, earlier: Sequence[str] = ()) -> None:
    """Run `earlier` turns on `session`, then one that waits for approval of `c7` (add)."""
    await _talk(store, session, *earlier)
    script = [calls(ToolUsePart("c7", "add", {"a": 1000, "b": 1}))]
    [output] = await _talk(
        store, session, "add big numbers", provider=ScriptedProvider(script), config=APPROVED
    )
    assert output.exit_reason == AWAITING_APPROVAL


async def test_a_fork_ending_on_a_turn_that_waits_is_refused_naming_its_calls_and_where_to_fork(
    store: HistoryStore,
) -> None:
    await _paused(store, "wait", earlier=["hello"])

    with pytest.raises(PendingCallsError) as refused:
        await fork_session(store, "wait", "w2", turns=2)

    assert (refused.value.turns, refused.value.fits) == (2, 1)
    assert [(c.id, c.name) for c in refused.value.pending] == [("c7", "add")]
    assert str(refused.value) == (
        "turn 2 of session 'wait' waits for approval of c7 (add): a fork there would wait on "
        "the same calls, and approving them in both sessions would run them twice; fork its "
        "first 1 turn instead, or decide them in 'wait' first and fork after"
    )
    assert await _keys(store, "w2") == []
    assert (await fork_session(store, "wait", "w2", turns=1)).messages == 2


async def test_a_session_whose_only_turn_waits_has_no_fork_that_would_do(
    store: HistoryStore,
) -> None:
    await _paused(store, "wait")

    with pytest.raises(PendingCallsError, match="no earlier turn ends without waiting") as refused:
        await fork_session(store, "wait")

    assert refused.value.fits is None


async def test_once_its_calls_are_decided_the_turn_forks_without_the_standing_decisions(
    store: HistoryStore,
) -> None:
    await _paused(store, "wait")
    turn = NeuronTurn(
        ScriptedProvider([answer("1001")]),
        tools=ToolRegistry([add]),
        state=store,
        config=APPROVED,
    )
    decided = [Decision.approve("c7", always=True)]
    await LocalOrchestrator({"agent": turn}, store).dispatch("agent", resume_input("wait", decided))
    assert await store.read(SessionScope(id="wait"), STANDING_KEY) is not None

    forked = await fork_session(store, "wait")

    assert await _history(store, forked.session) == await _history(store, "wait")
    assert await _keys(store, forked.session) == [HISTORY_KEY]  # no standing decisions


async def test_an_unknown_session_is_refused_naming_it(store: HistoryStore) -> None:
    with pytest.raises(UnknownSessionError, match="no session 'nope' to fork: it has no history"):
        await fork_session(store, "nope")

    assert await _keys(store, "nope") == []
    assert "did you mean 'trip', 'trips'?" in str(UnknownSessionError("trpi", ["trip", "trips"]))


@pytest.mark.parametrize("turns", [0, -1, 4])
async def test_a_count_of_turns_the_session_does_not_have_is_refused_naming_both(
    store: HistoryStore, turns: int
) -> None:
    await _talk(store, "trip", "one", "two", "three")

    with pytest.raises(TurnsOutOfRangeError) as refused:
        await fork_session(store, "trip", "trip-b", turns=turns)

    assert str(refused.value) == (
        f"cannot fork the first {turns} turns of session 'trip': it has 3 turns; give 1 to 3"
    )
    assert await _keys(store, "trip-b") == []


async def test_a_session_with_no_turn_is_refused_saying_so(store: HistoryStore) -> None:
    only_answers: list[JsonValue] = [{"role": "assistant", "content": "hello?"}]
    await store.append_history(HistoryAppend(session="mute", turn_id="t", messages=only_answers))

    with pytest.raises(TurnsOutOfRangeError, match="it has no turn"):
        await fork_session(store, "mute")


async def test_a_target_with_history_is_refused_and_left_as_it_was(store: HistoryStore) -> None:
    await _talk(store, "trip", "one", "two")
    await _talk(store, "taken", "mine")
    before = await _history(store, "taken")

    with pytest.raises(TargetExistsError) as refused:
        await fork_session(store, "trip", "taken", turns=1)

    assert str(refused.value) == (
        "session 'taken' already holds a history of 2 message(s); a fork goes to a new "
        "session, so name one that holds nothing (or let a fresh id be made)"
    )
    assert await _history(store, "taken") == before
    assert await _keys(store, "taken") == [HISTORY_KEY]


async def test_a_session_cannot_be_forked_into_itself(store: HistoryStore) -> None:
    await _talk(store, "trip", "one", "two")
    before = await _history(store, "trip")

    with pytest.raises(TargetExistsError, match="session 'trip' already holds a history"):
        await fork_session(store, "trip", "trip", turns=1)

    assert await _history(store, "trip") == before


async def test_a_target_holding_other_state_is_refused_so_a_fork_starts_with_none(
    store: HistoryStore,
) -> None:
    await _talk(store, "trip", "one")
    await store.write(SessionScope(id="used"), STANDING_KEY, {"add": {"decision": "approve"}})

    with pytest.raises(TargetExistsError, match=f"state of its own \\(keys {STANDING_KEY}\\)"):
        await fork_session(store, "trip", "used")

    assert await _history(store, "used") is None


class _Racing(InMemoryStore):
    """A store on which another writer gives `session` a history just after the fork looked."""

    def __init__(self, session: str) -> None:
        super().__init__()
        self.session = session

    async def list(self, scope: Any, prefix: str) -> list[str]:
        if scope == SessionScope(id=self.session):
            racer = [{"role": "user", "content": "first!"}]
            await self.append_history(
                HistoryAppend(session=self.session, turn_id="r", messages=racer)
            )
        return await super().list(scope, prefix)


async def test_a_target_written_while_the_fork_is_made_is_refused_with_nothing_added() -> None:
    store = _Racing("late")
    await _talk(store, "trip", "one")

    with pytest.raises(TargetExistsError, match="session 'late' already holds a history written"):
        await fork_session(store, "trip", "late")

    assert await _history(store, "late") == [{"role": "user", "content": "first!"}]


@pytest.mark.parametrize(
    ("stored", "why"),
    [
        ("not a list", "it is not a list but str"),
        ([{"role": "wizard", "content": "hi"}], "it does not parse"),
        ([["not", "a", "message"]], "it does not parse"),
    ],
)
async def test_a_history_that_does_not_parse_is_a_clear_error(
    store: HistoryStore, stored: JsonValue, why: str
) -> None:
    await store.write(SessionScope(id="bad"), HISTORY_KEY, stored)

    with pytest.raises(UnreadableHistoryError) as refused:
        await fork_session(store, "bad", "copy")

    assert str(refused.value).startswith(f"the history of session 'bad' cannot be forked: {why}")
    assert await _keys(store, "copy") == []


async def test_every_refusal_is_a_fork_error_that_a_retry_cannot_mend(store: HistoryStore) -> None:
    from layer0 import NonRetryableError

    with pytest.raises(ForkError) as refused:
        await fork_session(store, "nope")

    assert isinstance(refused.value, NonRetryableError)


async def test_a_store_that_cannot_append_atomically_is_refused_before_anything() -> None:
    class Plain:
        async def read(self, scope: Any, key: str) -> JsonValue:
            return None

    with pytest.raises(TypeError, match=r"needs a layer0\.HistoryStore, not Plain"):
        await fork_session(Plain(), "trip")  # type: ignore[arg-type]
