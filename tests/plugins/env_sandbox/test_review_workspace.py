"""A kept workspace holds what a run before left there: the parent writes nothing through it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from layer0 import CredentialRef, EnvironmentSpec, FileInjection, ProvisionFailed, TurnInput
from neuron_env_sandbox import (
    MissingCredentialError,
    ProcessEnvironment,
    SandboxEnvironment,
    StaticCredentials,
    UnsafeWorkspaceError,
)
from neuron_env_sandbox._child_environment import owned_by, remove_workspace
from neuron_env_sandbox._tree import remove_tree
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
    with pytest.raises(UnsafeWorkspaceError, match="'conf' in the workspace is a symbolic link"):
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


async def test_a_fifo_left_in_the_workspace_is_refused_not_waited_on(tmp_path: Path) -> None:
    # Opened to write, a FIFO waits for a reader: the parent (and its event loop) would hang.
    workspace = tmp_path / "workspace"
    (workspace / "task").mkdir(parents=True)
    os.mkfifo(workspace / "task" / "README")
    environment = _environment(workspace, files={"task/README": "fix the bug"})
    with pytest.raises(UnsafeWorkspaceError, match="'task/README' in the workspace is a FIFO"):
        await environment.run(TurnInput(message="go", trigger="user"), EnvironmentSpec())


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
    with pytest.raises(UnsafeWorkspaceError, match="'conf'"):
        await call_tool(
            SandboxEnvironment,
            "shell",
            {"command": "true"},
            workspace=workspace,
            files={"conf/settings.toml": "x = 1"},
        )
    assert list(outside.iterdir()) == []


def test_a_workspace_whose_child_locked_its_directories_is_still_deleted() -> None:
    # As a user (bubblewrap started by one, or ProcessEnvironment), the child owns what it
    # leaves; root passes any mode, so the removal runs as an ordinary uid here.
    nobody = 65534
    workspace = Path(tempfile.mkdtemp(prefix="neuron-env-"))
    outside = Path(tempfile.mkdtemp(prefix="neuron-env-outside-"))
    (outside / "keep").mkdir()
    for directory in ("a/b", "c"):
        (workspace / directory).mkdir(parents=True)
        (workspace / directory / "f").write_text("x")
    (workspace / "c" / "link").symlink_to(outside / "keep")
    for root, dirs, files in os.walk(workspace):
        for name in (*dirs, *files):
            os.chown(os.path.join(root, name), nobody, nobody, follow_symlinks=False)
    for owned in (workspace, outside, outside / "keep"):
        os.chown(owned, nobody, nobody)
    (workspace / "a" / "b").chmod(0o500)
    (workspace / "a").chmod(0o500)
    (workspace / "c").chmod(0o000)
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the forked child reports by its exit status)
            os.setgid(nobody)
            os.setuid(nobody)
            remove_workspace(workspace)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert not workspace.exists()
        assert (outside / "keep").stat().st_mode & 0o777 == 0o755  # not opened through a link
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(outside)


def _nest(top: Path, depth: int) -> None:
    """Make `depth` directories, each in the one before, with a file and a link at the bottom."""
    descriptor = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=descriptor)
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=descriptor))
        os.symlink("/", "up", dir_fd=descriptor)
    finally:
        os.close(descriptor)


# Deeper than Python recurses (os.walk, shutil.rmtree) and than a path may be long.
DEPTH = 2500


def test_a_workspace_nested_deeper_than_python_recurses_is_deleted(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    _nest(workspace, DEPTH)
    remove_workspace(workspace)
    assert not workspace.exists()


def test_a_kept_workspace_nested_deeper_than_python_recurses_is_given_to_the_sandbox_user(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    _nest(workspace, DEPTH)
    owned_by(workspace, 4242)
    descriptor = os.open(workspace, os.O_RDONLY)
    try:
        for _ in range(DEPTH):
            assert os.stat("d", dir_fd=descriptor).st_uid == 4242
            inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        assert os.stat("f", dir_fd=descriptor).st_uid == 4242
        assert os.stat("up", dir_fd=descriptor, follow_symlinks=False).st_uid == 4242
    finally:
        os.close(descriptor)
        remove_workspace(workspace)  # pytest's own clean-up recurses
    assert os.stat("/").st_uid == 0  # the link's target is not given away


def test_a_directory_moved_out_during_removal_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Climbing back through `..` from a directory something moved away would go on there.
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace / "a" / "b" / "f").write_text("x")
    outside.mkdir()
    unlink = os.unlink

    def unlink_and_move(path: str, *, dir_fd: int | None = None) -> None:
        unlink(path, dir_fd=dir_fd)
        if path == "f":
            (workspace / "a" / "b").rename(outside / "b")

    monkeypatch.setattr(os, "unlink", unlink_and_move)
    with pytest.raises(OSError, match="a directory moved during the walk"):
        remove_tree(workspace)
    assert (outside / "b").is_dir()


async def test_a_credential_file_does_not_stay_in_a_kept_workspace_for_the_next_run(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    credentials = StaticCredentials({"key": "k-123", "other": "o-456"})
    spec = EnvironmentSpec(
        credentials=[
            CredentialRef(name="key", injection=FileInjection(path="secrets/key")),
            CredentialRef(name="other", injection=FileInjection(path="other")),
        ]
    )
    await _environment(workspace, credentials=credentials).run(
        TurnInput(message="go", trigger="user"), spec
    )
    assert (workspace / "secrets").is_dir()
    assert not (workspace / "secrets" / "key").exists()
    assert not (workspace / "other").exists()


async def test_credentials_written_before_a_failing_one_are_removed(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    spec = EnvironmentSpec(
        credentials=[
            CredentialRef(name="key", injection=FileInjection(path="key")),
            CredentialRef(name="missing", injection=FileInjection(path="missing")),
        ]
    )
    environment = _environment(workspace, credentials=StaticCredentials({"key": "k-123"}))
    with pytest.raises(MissingCredentialError):
        await environment.run(TurnInput(message="go", trigger="user"), spec)
    assert list(workspace.iterdir()) == []
