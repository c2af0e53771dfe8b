"""TemporalOrchestrator carries out only what the dispatched agent's EffectPolicy allows."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from layer0 import (
    EffectPolicy,
    EffectRefused,
    HandoffEffect,
    SessionScope,
    TurnConfig,
    TurnInput,
    TurnMetadata,
    TurnOutput,
    WriteMemoryEffect,
)
from layer0.testing import EchoTurn
from neuron_state_sqlite import SqliteStore

from .conftest import hosting

pytestmark = pytest.mark.asyncio(loop_scope="session")

ALLOWED = WriteMemoryEffect(scope=SessionScope(id="mine"), key="k", value=1)
FORBIDDEN = WriteMemoryEffect(scope="global", key="shared", value="overwritten")


class RogueTurn:
    """A hand-written third-party Turn declaring what its agent may not do."""

    def __init__(self, *effects: WriteMemoryEffect | HandoffEffect) -> None:
        self.effects = list(effects)

    async def execute(self, input: TurnInput) -> TurnOutput:
        return TurnOutput(
            message="done",
            exit_reason="complete",
            metadata=TurnMetadata.zero(),
            effects=self.effects,
        )


def mine(config: TurnConfig | None = None) -> TurnInput:
    return TurnInput(message="go", trigger="user", session="mine", config=config)


async def test_a_third_party_turns_forbidden_effect_is_refused_and_nothing_is_written(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        await store.write("global", "shared", "original")
        agents = {"rogue": RogueTurn(ALLOWED, FORBIDDEN)}
        async with hosting(env, agents, store, default_policy=EffectPolicy()) as orchestrator:
            with pytest.raises(EffectRefused) as raised:
                await orchestrator.dispatch("rogue", mine())
        assert await store.read("global", "shared") == "original"
        assert await store.read(SessionScope(id="mine"), "k") is None
    message = str(raised.value)
    assert "agent 'rogue'" in message and "write_memory in scope 'global'" in message


async def test_a_forbidden_handoff_is_refused_by_the_worker(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        agents = {"rogue": RogueTurn(HandoffEffect(agent="admin", state=None)), "admin": EchoTurn()}
        policies = {"rogue": EffectPolicy.of(["handoff:helper"])}
        async with hosting(env, agents, store, policies=policies) as orchestrator:
            with pytest.raises(EffectRefused, match="handoff to agent 'admin'"):
                await orchestrator.dispatch("rogue", mine())


async def test_the_callers_grant_lets_the_dispatched_turn_through(
    env: WorkflowEnvironment, tmp_path: Path
) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        agents = {"rogue": RogueTurn(ALLOWED, FORBIDDEN)}
        grant = TurnConfig(effect_policy=EffectPolicy.of(["global"]))
        async with hosting(env, agents, store, default_policy=EffectPolicy()) as orchestrator:
            await orchestrator.dispatch("rogue", mine(grant))
        assert await store.read("global", "shared") == "overwritten"


@pytest.mark.parametrize("field", ["signal_timeout", "start_to_close", "approval_timeout"])
async def test_a_duration_past_a_hundred_years_is_refused_when_the_policy_is_made(
    field: str,
) -> None:
    from pydantic import ValidationError

    from neuron_orch_local import MAX_MILLISECONDS
    from neuron_orch_temporal import TurnPolicy

    # 10**17 ms overflowed the workflow's timedelta: its task failed for ever, the dispatch hung.
    with pytest.raises(ValidationError, match=field):
        TurnPolicy.model_validate({field: 10**17})
    assert getattr(TurnPolicy.model_validate({field: MAX_MILLISECONDS}), field) == MAX_MILLISECONDS
