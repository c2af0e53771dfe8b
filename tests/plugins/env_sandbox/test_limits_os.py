"""The open-file and file-size limits, enforced by the kernel inside the sandbox."""

from __future__ import annotations

from layer0 import EnvironmentSpec, ResourceLimits
from neuron_env_sandbox import ProcessLimits, SandboxEnvironment

from ._helpers import call_tool

OPEN_MANY = """
import os
opened = []
try:
    while True:
        opened.append(os.open("/dev/null", os.O_RDONLY))
except OSError as exc:
    print(len(opened), exc.strerror)
"""


async def test_opening_files_stops_at_the_open_file_limit() -> None:
    limits = ProcessLimits(open_files=32)
    call = await call_tool(SandboxEnvironment, "python", {"code": OPEN_MANY}, limits=limits)
    count, reason = call.value["stdout"].split(maxsplit=1)
    assert int(count) < 32
    assert reason.strip() == "Too many open files"


async def test_a_file_cannot_grow_past_the_specs_disk_limit() -> None:
    spec = EnvironmentSpec(resources=ResourceLimits(disk="1Mi"))
    command = "head -c 3000000 /dev/zero > big; echo status=$?; stat -c %s big"
    call = await call_tool(SandboxEnvironment, "shell", {"command": command}, spec=spec)
    out = call.value["stdout"]
    assert "status=0" not in out
    assert int(out.split()[-1]) <= 1024 * 1024


async def test_files_given_to_the_environment_are_in_the_workspace() -> None:
    call = await call_tool(
        SandboxEnvironment,
        "shell",
        {"command": "cat task/README"},
        files={"task/README": "fix the bug"},
    )
    assert call.value["stdout"] == "fix the bug"
