"""A kept workspace holds what a run before left there: the parent writes nothing through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from layer0 import CredentialRef, EnvironmentSpec, FileInjection, ProvisionFailed, TurnInput
from neuron_env_sandbox import (
    ProcessEnvironment,
    SandboxEnvironment,
    StaticCredentials,
    WorkspaceLinkError,
)
from neuron_turn.testing import ScriptedProvider, text_response

from ._helpers import RECIPE, call_tool

RECIPE_NO_TOOLS = RECIPE.model_copy(update={"tools": ()})


def _environment(workspace: Path, **options: object) -> ProcessEnvironment:
    provider = ScriptedProvider([text_response("done")])
    return ProcessEnvironment(RECIPE_NO_TOOLS, provider=provider, workspace=workspace, **options)


def _kept(tmp_path: Path) -> tuple[Path, Path]:
    """A kept workspace whose `conf` a run before made a link to a directory outside it."""
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "conf").symlink_to(outside)
    return workspace, outside


async def test_a_callers_file_is_not_written_through_a_link_left_in_the_workspace(
    tmp_path: Path,
) -> None:
    workspace, outside = _kept(tmp_path)
    environment = _environment(workspace, files={"conf/deep/settings.toml": "x = 1"})
    with pytest.raises(WorkspaceLinkError, match="'conf' in the workspace is a symbolic link"):
        await environment.run(TurnInput(message="go", trigger="user"), EnvironmentSpec())
    assert list(outside.iterdir()) == []


async def test_a_credential_is_not_written_through_a_link_left_in_the_workspace(
    tmp_path: Path,
) -> None:
    workspace, outside = _kept(tmp_path)
    (workspace / "token").symlink_to(outside / "token")
    credentials = StaticCredentials({"key": "k-123"})
    for path, link in (("conf/token", "conf"), ("token", "token")):
        spec = EnvironmentSpec(
            credentials=[CredentialRef(name="key", injection=FileInjection(path=path))]
        )
        environment = _environment(workspace, credentials=credentials)
        with pytest.raises(ProvisionFailed, match=f"credential 'key': '{link}' in the work") as err:
            await environment.run(TurnInput(message="go", trigger="user"), spec)
        assert "k-123" not in str(err.value)
    assert list(outside.iterdir()) == []


async def test_files_in_a_kept_workspace_are_written_in_its_own_directories(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "task").mkdir(parents=True)
    (workspace / "task" / "README").write_text("old, longer text")
    environment = _environment(workspace, files={"task/README": "new", "a/b/c.txt": b"abc"})
    await environment.run(TurnInput(message="go", trigger="user"), EnvironmentSpec())
    assert (workspace / "task" / "README").read_text() == "new"
    assert (workspace / "a" / "b" / "c.txt").read_bytes() == b"abc"


async def test_a_sandboxed_run_cannot_aim_the_next_runs_files_outside_its_workspace(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    await call_tool(
        SandboxEnvironment, "shell", {"command": f"ln -s {outside} conf"}, workspace=workspace
    )
    assert (workspace / "conf").is_symlink()
    with pytest.raises(WorkspaceLinkError, match="'conf'"):
        await call_tool(
            SandboxEnvironment,
            "shell",
            {"command": "true"},
            workspace=workspace,
            files={"conf/settings.toml": "x = 1"},
        )
    assert list(outside.iterdir()) == []
