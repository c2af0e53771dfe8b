"""The child's own process, as code the model wrote would see it from beside it."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from layer0 import CredentialRef, EnvironmentSpec, FileInjection, TurnInput
from neuron_env_sandbox import ProcessEnvironment, SandboxEnvironment, StaticCredentials
from neuron_tool import tool
from neuron_turn import RegisterTool, ToolResultPart, hookimpl

from ._helpers import RECIPE, scripted

_PR_GET_DUMPABLE = 3


@tool
def dumpable() -> int:
    """Return this process's dumpable flag (1: its own user may open its /proc files)."""
    return int(ctypes.CDLL(None).prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0))


@tool
def mode(path: str) -> str:
    """Return the permission bits of the file at `path`, in octal."""
    return oct(os.stat(path).st_mode & 0o777)


@hookimpl
def register_tools(register: RegisterTool) -> None:
    """Offer the probes (this module is the recipe's plugin in the child)."""
    register(dumpable)
    register(mode)


async def test_the_childs_process_is_not_dumpable_by_the_code_it_runs() -> None:
    # Dumpable, a process of the same user could write forged messages into the channel
    # through /proc/<child>/fd, or its memory through /proc/<child>/mem (bubblewrap
    # started by a user: the model's code runs as that same uid).
    recipe = RECIPE.model_copy(update={"tools": ("dumpable",), "plugins": (__name__,)})
    for environment in (ProcessEnvironment, SandboxEnvironment):
        provider = scripted("dumpable", {})
        await environment(recipe, provider=provider).run(
            TurnInput(message="go", trigger="user"), EnvironmentSpec()
        )
        (result,) = provider.requests[1].messages[-1].content
        assert isinstance(result, ToolResultPart)
        assert (result.content, result.is_error) == ("0", False), environment


async def test_a_credential_written_over_a_file_a_run_before_left_is_its_owners_alone(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "key").write_text("left by a run before")
    (workspace / "key").chmod(0o666)
    recipe = RECIPE.model_copy(update={"tools": ("mode",), "plugins": (__name__,)})
    provider = scripted("mode", {"path": "key"})
    spec = EnvironmentSpec(
        credentials=[CredentialRef(name="key", injection=FileInjection(path="key"))]
    )
    environment = ProcessEnvironment(
        recipe,
        provider=provider,
        workspace=workspace,
        credentials=StaticCredentials({"key": "k-123"}),
    )
    await environment.run(TurnInput(message="go", trigger="user"), spec)
    (result,) = provider.requests[1].messages[-1].content
    assert isinstance(result, ToolResultPart)
    assert (result.content, result.is_error) == ("0o600", False)
