"""`LocalEnvironment`: in-process; it applies what it can and refuses the rest by name."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from layer0 import (
    CredentialRef,
    EnvironmentSpec,
    EnvVarInjection,
    FileInjection,
    ProcessBoundary,
    ResourceLimits,
    TurnInput,
    TurnOutput,
)
from layer0.testing import EchoTurn
from neuron_env_sandbox import (
    IsolationRequiredError,
    LimitExceededError,
    LocalEnvironment,
    StaticCredentials,
    UnsupportedSpecError,
)
from neuron_hooks import HookRegistry
from neuron_tool import ToolRegistry
from neuron_tools_basic import shell
from neuron_turn import NeuronTurn
from neuron_turn.testing import ScriptedProvider

TURN_INPUT = TurnInput(message="hello", trigger="user")


async def test_runs_the_turn_in_process() -> None:
    output = await LocalEnvironment(EchoTurn()).run(TURN_INPUT, EnvironmentSpec())
    assert output.message.as_text() == "hello"


@pytest.mark.parametrize(
    ("spec", "what"),
    [
        (EnvironmentSpec(isolation=[ProcessBoundary()]), "isolation boundary 'process'"),
        (EnvironmentSpec(resources=ResourceLimits(memory="1Gi")), "resource limits"),
        (
            EnvironmentSpec(
                credentials=[CredentialRef(name="k", injection=EnvVarInjection(var_name="K"))]
            ),
            "as an environment variable",
        ),
    ],
)
async def test_refuses_what_it_cannot_apply_in_process(spec: EnvironmentSpec, what: str) -> None:
    with pytest.raises(UnsupportedSpecError, match=what):
        await LocalEnvironment(EchoTurn()).run(TURN_INPUT, spec)


async def test_a_file_credential_exists_only_while_the_turn_runs(tmp_path: Path) -> None:
    seen: list[str] = []

    class ReadsKey:
        async def execute(self, input: TurnInput) -> TurnOutput:
            seen.append((tmp_path / "key").read_text())
            return await EchoTurn().execute(input)

    spec = EnvironmentSpec(
        credentials=[CredentialRef(name="k", injection=FileInjection(path="key"))]
    )
    environment = LocalEnvironment(
        ReadsKey(), credentials=StaticCredentials({"k": "v"}), credentials_dir=tmp_path
    )
    await environment.run(TURN_INPUT, spec)
    assert seen == ["v"]
    assert not (tmp_path / "key").exists()


async def test_the_wall_clock_cancels_the_turn() -> None:
    class Waits:
        async def execute(self, input: TurnInput) -> TurnOutput:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    environment = LocalEnvironment(Waits(), wall_clock_seconds=0.01)
    with pytest.raises(LimitExceededError, match="wall-clock"):
        await environment.run(TURN_INPUT, EnvironmentSpec())


def test_a_turn_with_a_tool_that_requires_isolation_is_refused() -> None:
    turn = NeuronTurn(ScriptedProvider([]), tools=ToolRegistry([shell]), hooks=HookRegistry())
    with pytest.raises(IsolationRequiredError, match="'shell'"):
        LocalEnvironment(turn)
