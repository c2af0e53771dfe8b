"""`python`: run a Python program, only inside an environment's sandbox."""

from __future__ import annotations

import sys

from neuron_tool import ToolAnnotations, tool

from ._subprocess import CommandResult, run_command
from .shell import MAX_TIMEOUT

__all__ = ["python"]


@tool(
    requires_isolation=True,
    annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True),
)
async def python(code: str, timeout: float = 30.0) -> CommandResult:
    """Run a Python 3 program in the sandbox's workspace; return its exit code, stdout and stderr.

    Args:
        code: The program's source; print what you want to see.
        timeout: Seconds before the program (and all it started) is killed; at most 300.
    """
    # The program comes on stdin, so its size is not bounded by the argument limit.
    return await run_command(
        [sys.executable, "-I", "-"],
        stdin=code.encode(),
        timeout=min(max(timeout, 0.1), MAX_TIMEOUT),
    )
