"""The bubblewrap sandbox, with real processes: what a tool inside can and cannot reach."""

from __future__ import annotations

import asyncio
import base64
import os
import random
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from layer0 import (
    Base64Source,
    ContainerBoundary,
    CredentialRef,
    EnvironmentSpec,
    EnvVarInjection,
    FileInjection,
    ImageBlock,
    NetworkAction,
    NetworkPolicy,
    NetworkRule,
    SessionScope,
    TurnInput,
)
from neuron_env_sandbox import (
    LimitExceededError,
    ProcessLimits,
    SandboxEnvironment,
    StaticCredentials,
    UnsupportedSpecError,
)
from neuron_state_sqlite import SqliteStore
from neuron_turn import ImagePart, TextPart
from neuron_turn.loop.provider import MAX_IMAGE_BASE64
from neuron_turn.testing import ScriptedProvider, text_response

from ._helpers import RECIPE, call_tool, uid_processes
from .fixture_tools import PIXEL

ROOT = os.geteuid() == 0


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A caller's home with an ssh key, as HOME of this (the parent) process."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(home))
    yield home


@pytest.fixture
def uid() -> int:
    """The unprivileged uid the sandbox drops to (when the tests run as root)."""
    return random.randrange(1 << 20, 1 << 30)


@pytest.fixture
async def listener() -> AsyncIterator[int]:
    """A TCP server on the host's 127.0.0.1; yields its port."""
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


async def test_the_callers_ssh_key_is_not_in_the_sandbox(home: Path) -> None:
    key = home / ".ssh" / "id_ed25519"
    call = await call_tool(SandboxEnvironment, "read_file", {"path": str(key)})
    assert call.result.is_error
    assert "No such file or directory" in call.result.content
    assert "PRIVATE KEY" not in call.result.content
    home_listing = await call_tool(SandboxEnvironment, "shell", {"command": "ls -A ~"})
    assert home_listing.value["stdout"] == ""  # ~ is the empty, private workspace


async def test_an_image_a_tool_returns_in_the_sandbox_reaches_the_provider() -> None:
    call = await call_tool(SandboxEnvironment, "screenshot", {})
    assert call.result.content == "took it"
    (image,) = call.result.files
    assert isinstance(image, ImagePart) and image.media_type == "image/png"
    assert isinstance(image.source, Base64Source)
    assert base64.b64decode(image.source.data) == PIXEL


async def test_an_image_as_large_as_a_provider_keeps_reaches_the_sandboxed_turn() -> None:
    # Larger than the channel carried before its limit was made to hold such an image.
    data = base64.b64encode(PIXEL).decode() + "A" * (40 * 1024 * 1024)
    assert len(data) <= MAX_IMAGE_BASE64
    image = ImagePart(Base64Source(data=data), "image/png")
    drawn = replace(text_response("Drawn."), content=(TextPart("Drawn."), image))
    provider = ScriptedProvider([drawn])
    environment = SandboxEnvironment(RECIPE.model_copy(update={"tools": ()}), provider=provider)
    output = await environment.run(TurnInput(message="draw", trigger="user"), EnvironmentSpec())
    assert output.exit_reason == "complete"
    images = [block for block in output.message.root if isinstance(block, ImageBlock)]
    sources = [block.source for block in images]
    assert [len(source.data) for source in sources if isinstance(source, Base64Source)] == [
        len(data)
    ]


async def test_the_state_file_is_not_in_the_sandbox(tmp_path: Path) -> None:
    async with SqliteStore(tmp_path / "state.db") as store:
        await store.write(SessionScope(id="s1"), "messages", [])
        call = await call_tool(
            SandboxEnvironment, "read_file", {"path": str(tmp_path / "state.db")}
        )
    assert call.result.is_error
    assert "No such file or directory" in call.result.content


async def test_a_variable_of_the_parent_not_granted_is_not_in_the_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NEURON_TEST_SECRET", "hunter2")
    call = await call_tool(SandboxEnvironment, "read_env", {"name": "NEURON_TEST_SECRET"})
    assert call.result.content == "<unset>"


async def test_a_granted_credential_arrives_by_reference_only() -> None:
    spec = EnvironmentSpec(
        credentials=[CredentialRef(name="github", injection=EnvVarInjection(var_name="GH_TOKEN"))]
    )
    credentials = StaticCredentials({"github": "ghp-secret"})
    call = await call_tool(
        SandboxEnvironment, "read_env", {"name": "GH_TOKEN"}, spec=spec, credentials=credentials
    )
    assert call.result.content == "ghp-secret"
    assert "ghp-secret" not in spec.model_dump_json()


async def test_a_file_credential_is_written_in_the_workspace_for_the_sandbox_user_only() -> None:
    spec = EnvironmentSpec(
        credentials=[CredentialRef(name="key", injection=FileInjection(path="secrets/key"))]
    )
    call = await call_tool(
        SandboxEnvironment,
        "shell",
        {"command": "stat -c '%a %u' secrets/key && id -u && cat secrets/key"},
        spec=spec,
        credentials=StaticCredentials({"key": "k-123"}),
    )
    mode, owner, uid, value = call.value["stdout"].split()
    assert (mode, owner == uid, value) == ("600", True, "k-123")


async def test_no_connection_to_the_hosts_loopback_without_network(listener: int) -> None:
    call = await call_tool(SandboxEnvironment, "connect", {"port": listener})
    assert call.result.is_error
    assert "Connection refused" in call.result.content


async def test_a_policy_allowing_all_traffic_shares_the_network(listener: int) -> None:
    spec = EnvironmentSpec(network=NetworkPolicy(default=NetworkAction.ALLOW, rules=[]))
    call = await call_tool(SandboxEnvironment, "connect", {"port": listener}, spec=spec)
    assert call.result.content == "connected"


async def test_per_destination_rules_are_refused_not_half_enforced() -> None:
    rule = NetworkRule(destination="api.github.com", port=443, action=NetworkAction.ALLOW)
    spec = EnvironmentSpec(network=NetworkPolicy(default=NetworkAction.DENY, rules=[rule]))
    with pytest.raises(UnsupportedSpecError, match=r"api\.github\.com:443"):
        await call_tool(SandboxEnvironment, "read_env", {"name": "X"}, spec=spec)


async def test_a_container_boundary_is_refused() -> None:
    spec = EnvironmentSpec(isolation=[ContainerBoundary(image="debian")])
    with pytest.raises(UnsupportedSpecError, match="'container'"):
        await call_tool(SandboxEnvironment, "read_env", {"name": "X"}, spec=spec)


async def test_the_system_is_read_only_and_the_workspace_writable() -> None:
    command = (
        "touch /usr/x 2>&1; echo ok > note && cat note; grep NoNewPrivs /proc/self/status; "
        "grep -vc nosuid /proc/self/mountinfo; id -u"
    )
    call = await call_tool(SandboxEnvironment, "shell", {"command": command})
    out = call.value["stdout"]
    assert "NoNewPrivs:\t1" in out  # no setuid program can give privileges back
    assert out.split()[-2] == "0"  # every mount is nosuid
    assert "Read-only file system" in out or "Permission denied" in out
    assert "ok" in out
    if ROOT:
        assert out.split()[-1] != "0"  # root dropped to an unprivileged user


FORK_BOMB = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""


async def test_a_fork_bomb_hits_the_process_limit_and_leaves_nothing(uid: int) -> None:
    limits = ProcessLimits(processes=16, cpu_seconds=30)
    call = await call_tool(
        SandboxEnvironment,
        "python",
        {"code": FORK_BOMB, "timeout": 2},
        limits=limits,
        run_as=uid,
    )
    assert call.value["timed_out"] is True
    assert call.output.message.as_text() == "done"
    if ROOT:
        assert uid_processes(uid) == []


async def test_a_memory_hog_fails_at_the_memory_limit(uid: int) -> None:
    code = "data = bytearray(2 * 1024**3)"
    limits = ProcessLimits(memory_bytes=512 * 1024**2)
    call = await call_tool(SandboxEnvironment, "python", {"code": code}, limits=limits, run_as=uid)
    assert call.value["exit_code"] == 1
    assert "MemoryError" in call.value["stderr"]
    in_process = await call_tool(
        SandboxEnvironment, "hog", {"megabytes": 2048}, limits=limits, run_as=uid
    )
    assert in_process.result.is_error and "MemoryError" in in_process.result.content
    if ROOT:
        assert uid_processes(uid) == []


async def test_an_infinite_loop_is_killed_at_the_cpu_limit(uid: int) -> None:
    limits = ProcessLimits(cpu_seconds=1)
    with pytest.raises(LimitExceededError, match="CPU-time limit of 1s") as caught:
        await call_tool(SandboxEnvironment, "spin", {}, limits=limits, run_as=uid)
    assert caught.value.resource == "cpu"
    if ROOT:
        assert uid_processes(uid) == []


async def test_a_turn_past_its_wall_clock_is_stopped_with_everything_it_started(
    uid: int, tmp_path: Path
) -> None:
    limits = ProcessLimits(wall_clock_seconds=2)
    with pytest.raises(LimitExceededError, match="wall-clock limit of 2s") as caught:
        await call_tool(SandboxEnvironment, "hang", {}, limits=limits, run_as=uid)
    assert caught.value.resource == "wall_clock"
    if ROOT:
        assert uid_processes(uid) == []
