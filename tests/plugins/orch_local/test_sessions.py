"""Sessions end to end: NeuronTurn + LocalOrchestrator + SqliteStore on a real file."""

from __future__ import annotations

from pathlib import Path

from layer0 import EffectPolicy, SessionScope, TurnInput
from neuron_orch_local import BatchStateStore, LocalOrchestrator
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    NeuronTurn,
    NeuronTurnConfig,
    ProviderMessage,
    ProviderRequest,
    ProviderResponse,
    TextPart,
    ToolUsePart,
)
from neuron_turn.testing import (
    FunctionProvider,
    ScriptedProvider,
    text_response,
    tool_call_response,
)


def answering() -> FunctionProvider:
    def answer(request: ProviderRequest) -> ProviderResponse:
        return text_response(f"answer {len(provider.requests)}")

    provider = FunctionProvider(answer)
    return provider


def transcript(messages: object) -> list[tuple[str, str]]:
    assert isinstance(messages, tuple | list)
    lines: list[tuple[str, str]] = []
    for message in messages:
        assert isinstance(message, ProviderMessage)
        texts = [part.text for part in message.content if isinstance(part, TextPart)]
        lines.append((message.role, " ".join(texts)))
    return lines


def ask(text: str) -> TurnInput:
    return TurnInput(message=text, trigger="user", session="s1")


async def test_the_third_dispatch_on_a_session_sees_the_whole_conversation(tmp_path: Path) -> None:
    provider = answering()
    async with SqliteStore(tmp_path / "state.db") as store:
        assert isinstance(store, BatchStateStore)
        orchestrator = LocalOrchestrator({"assistant": NeuronTurn(provider, state=store)}, store)
        for question in ("first question", "second question", "third question"):
            await orchestrator.dispatch("assistant", ask(question))
        stored = await store.read(SessionScope(id="s1"), "messages")
    assert transcript(provider.requests[2].messages) == [
        ("user", "first question"),
        ("assistant", "answer 1"),
        ("user", "second question"),
        ("assistant", "answer 2"),
        ("user", "third question"),
    ]
    assert isinstance(stored, list) and len(stored) == 6


async def test_a_session_continues_with_a_new_orchestrator_on_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    provider = answering()
    for question in ("one", "two"):
        async with SqliteStore(path) as store:
            orchestrator = LocalOrchestrator(
                {"assistant": NeuronTurn(provider, state=store)}, store
            )
            await orchestrator.dispatch("assistant", ask(question))
    assert transcript(provider.requests[1].messages) == [
        ("user", "one"),
        ("assistant", "answer 1"),
        ("user", "two"),
    ]


async def test_other_sessions_do_not_see_the_conversation(tmp_path: Path) -> None:
    provider = answering()
    async with SqliteStore(tmp_path / "state.db") as store:
        orchestrator = LocalOrchestrator({"assistant": NeuronTurn(provider, state=store)}, store)
        await orchestrator.dispatch("assistant", ask("secret"))
        await orchestrator.dispatch(
            "assistant", TurnInput(message="hello", trigger="user", session="s2")
        )
    assert transcript(provider.requests[1].messages) == [("user", "hello")]


async def test_a_neuron_turn_handoff_reaches_the_next_agent_with_the_history(
    tmp_path: Path,
) -> None:
    triage = ScriptedProvider(
        [
            tool_call_response(
                ToolUsePart(
                    id="call-1", name="handoff", input={"agent": "billing", "state": {"invoice": 7}}
                )
            )
        ]
    )
    billing = answering()
    async with SqliteStore(tmp_path / "state.db") as store:
        grant = EffectPolicy.of(["handoff:billing"])
        orchestrator = LocalOrchestrator(
            {
                "triage": NeuronTurn(
                    triage, state=store, config=NeuronTurnConfig(effect_policy=grant)
                ),
                "billing": NeuronTurn(billing, state=store),
            },
            store,
            policies={"triage": grant},
        )
        result = await orchestrator.run("triage", ask("where is my invoice?"))
    assert result.route == ("triage", "billing")
    assert result.output.message.as_text() == "answer 1"
    seen = transcript(billing.requests[0].messages)
    assert seen[0] == ("user", "where is my invoice?")
    assert seen[-1][0] == "user"
    assert "'triage'" in seen[-1][1] and '{"invoice": 7}' in seen[-1][1]
