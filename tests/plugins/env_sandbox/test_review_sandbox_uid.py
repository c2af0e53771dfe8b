"""The sandbox's own uid: every process of it is killed when a run ends, so it must be its own."""

from __future__ import annotations

import os
import random
import subprocess

import pytest

from neuron_env_sandbox import SandboxEnvironment, SandboxUnavailableError

from ._helpers import call_tool, running

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox drops to a uid as root")


async def test_a_run_as_uid_that_runs_processes_is_refused_and_they_live_on() -> None:
    uid = random.randrange(1 << 20, 1 << 30)
    bystander = subprocess.Popen(["sleep", "1000"], user=uid, group=uid)
    try:
        with pytest.raises(SandboxUnavailableError, match=f"uid {uid}, which runs 1 process"):
            await call_tool(SandboxEnvironment, "shell", {"command": "true"}, run_as=uid)
        assert running(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()
