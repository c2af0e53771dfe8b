"""`shell`: run a command with `/bin/sh`, only inside an environment's sandbox."""

from __future__ import annotations

from typing import Final

from neuron_tool import ToolAnnotations, tool

from ._subprocess import CommandResult, run_command

__all__ = ["MAX_TIMEOUT", "shell"]

MAX_TIMEOUT: Final = 300.0
"""The longest deadline, in seconds, the `shell` and `python` tools accept."""


@tool(
    requires_isolation=True,
    annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True),
)
async def shell(command: str, timeout: float = 30.0) -> CommandResult:
    """Run a shell command (/bin/sh -c) in the sandbox's workspace; return its exit code and output.

    Args:
        command: The command line, as you would type it in sh.
        timeout: Seconds before the command (and all it started) is killed; at most 300.
    """
    return await run_command(
        ["/bin/sh", "-c", command], stdin=b"", timeout=min(max(timeout, 0.1), MAX_TIMEOUT)
    )
