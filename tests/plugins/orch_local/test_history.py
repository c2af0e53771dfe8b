"""Session history through LocalOrchestrator: appended, never overwritten; optionally exclusive."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from layer0 import (
    HISTORY_KEY,
    DispatchFailed,
    EffectPolicy,
    HistoryAppend,
    HistoryConflict,
    SessionScope,
    TurnConfig,
    TurnInput,
)
from neuron_orch_local import LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import NeuronTurn, NeuronTurnConfig, ProviderRequest, ProviderResponse, TextPart
from neuron_turn.testing import FunctionProvider, text_response

SESSION = SessionScope(id="s")


def echo(request: ProviderRequest) -> ProviderResponse:
    (part,) = request.messages[-1].content
    assert isinstance(part, TextPart)
    return text_response(f"echo: {part.text}")


def ask(text: str, config: TurnConfig | None = None) -> TurnInput:
    return TurnInput(message=text, trigger="user", session="s", config=config)


async def test_two_orchestrators_on_one_file_keep_all_ten_exchanges(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    async with SqliteStore(db) as one, SqliteStore(db) as two:
        first = LocalOrchestrator({"a": NeuronTurn(FunctionProvider(echo), state=one)}, one)
        second = LocalOrchestrator({"a": NeuronTurn(FunctionProvider(echo), state=two)}, two)
        await asyncio.gather(
            *((first if n % 2 else second).dispatch("a", ask(f"m{n}")) for n in range(10))
        )
        history = await one.read(SESSION, HISTORY_KEY)
    assert isinstance(history, list) and len(history) == 20
    for user, assistant in zip(history[::2], history[1::2], strict=True):
        assert assistant == {"role": "assistant", "content": f"echo: {user['content']}"}  # type: ignore[index,call-overload]


async def test_a_run_asking_to_fail_on_a_changed_session_fails_and_records_nothing(
    tmp_path: Path,
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        others = iter(range(10))

        async def meanwhile(request: ProviderRequest) -> ProviderResponse:
            # Another run finishes on the same session while this one thinks.
            other = HistoryAppend(
                session="s",
                turn_id=f"other-{next(others)}",
                messages=[{"role": "user", "content": "x"}],
            )
            await store.append_history(other)
            return text_response("late")

        config = NeuronTurnConfig(effect_policy=EffectPolicy.of(["global"]))
        turn = NeuronTurn(FunctionProvider(meanwhile), state=store, config=config)
        orchestrator = LocalOrchestrator({"a": turn}, store)
        with pytest.raises(DispatchFailed, match="changed while this turn ran") as raised:
            await orchestrator.dispatch("a", ask("mine", TurnConfig(session_conflict="fail")))
        assert isinstance(raised.value.__cause__, HistoryConflict)
        assert await store.read(SESSION, HISTORY_KEY) == [{"role": "user", "content": "x"}]
        # Without the request, the same race appends after the other run.
        await orchestrator.dispatch("a", ask("again"))
        history = await store.read(SESSION, HISTORY_KEY)
    assert [m["content"] for m in history] == ["x", "x", "again", "late"]  # type: ignore[index,union-attr]


async def test_forty_sessions_dispatched_at_once_each_keep_their_exchanges_and_records(
    tmp_path: Path,
) -> None:
    # Their writes queue behind each other's commits and share them; none may be lost.
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator(
            {"a": NeuronTurn(FunctionProvider(echo), state=store)}, store
        )

        async def session(name: str) -> None:
            for turn in range(3):
                message = f"{name}-{turn}"
                await orchestrator.dispatch(
                    "a", TurnInput(message=message, trigger="user", session=name)
                )

        names = [f"s{number}" for number in range(40)]
        await asyncio.gather(*(session(name) for name in names))
        for name in names:
            history = await store.read(SessionScope(id=name), HISTORY_KEY)
            assert history == [
                message
                for turn in range(3)
                for message in (
                    {"role": "user", "content": f"{name}-{turn}"},
                    {"role": "assistant", "content": f"echo: {name}-{turn}"},
                )
            ]
            assert len(await store.turn_summaries(session=name)) == 3
