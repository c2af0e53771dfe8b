"""Hostile children on the channel: what they send is refused with a clear error, never a crash."""

from __future__ import annotations

import sys

import pytest

from neuron_env_sandbox import ChildFailedError
from neuron_env_sandbox._supervisor import Launch, supervise
from neuron_turn.testing import ScriptedProvider


def _child(script: str) -> Launch:
    """A child that reads the start line, then runs `script` (its stdout is the channel)."""
    code = f"import sys\nsys.stdin.readline()\n{script}"
    return Launch(
        argv=[sys.executable, "-I", "-c", code],
        env={},
        cwd="/",
        label="TestChild",
        wall_clock=30,
        cpu_seconds=None,
        memory_bytes=None,
    )


async def _supervise(launch: Launch) -> object:
    return await supervise(launch, {}, provider=ScriptedProvider([]), state=None, session=None)


async def test_a_message_nested_too_deep_to_read_is_a_broken_channel_not_a_crash() -> None:
    deep = "sys.stdout.write('{\"call\": ' + '[' * 200000 + '\\n'); sys.stdout.flush()"
    with pytest.raises(ChildFailedError, match="broke the channel: a message is nested too deep"):
        await _supervise(_child(deep + "\nsys.stdin.read()"))
