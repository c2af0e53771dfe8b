"""Running one command for a tool: its own session, a deadline, capped output, nothing left over."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Final

from typing_extensions import TypedDict

__all__ = ["MAX_OUTPUT", "CommandResult", "run_command"]

MAX_OUTPUT: Final = 64 * 1024
"""The most bytes of stdout, and of stderr, a tool returns; the rest is counted, not kept."""
_DRAIN_SECONDS: Final = 2.0


class CommandResult(TypedDict):
    """What the `shell` and `python` tools return."""

    exit_code: int | None
    """The exit status; negative: the signal that ended it; None: it was killed at the deadline."""
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    """True when stdout or stderr was longer than `MAX_OUTPUT` and was cut."""


async def run_command(argv: list[str], *, stdin: bytes, timeout: float) -> CommandResult:
    """Run `argv` with `stdin`, stop it and everything it started at `timeout` seconds."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    out = asyncio.create_task(_capped(process.stdout))
    err = asyncio.create_task(_capped(process.stderr))
    timed_out = False
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(stdin)
            await process.stdin.drain()
            process.stdin.close()
        async with asyncio.timeout(timeout):
            await process.wait()
    except TimeoutError:
        timed_out = True
    finally:
        # Background children of the command die with it: they share its session's group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
    (stdout, cut_out), (stderr, cut_err) = await _drained(out, err)
    return CommandResult(
        exit_code=None if timed_out else process.returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        truncated=cut_out or cut_err,
    )


async def _drained(
    *readers: asyncio.Task[tuple[str, bool]],
) -> list[tuple[str, bool]]:
    # A process that left the group may hold a pipe open: do not wait for it forever.
    done, pending = await asyncio.wait(readers, timeout=_DRAIN_SECONDS)
    for task in pending:
        task.cancel()
    return [task.result() if task in done else ("", True) for task in readers]


async def _capped(stream: asyncio.StreamReader) -> tuple[str, bool]:
    kept = bytearray()
    truncated = False
    while chunk := await stream.read(65536):
        room = MAX_OUTPUT - len(kept)
        kept += chunk[:room]
        truncated = truncated or len(chunk) > room
    return kept.decode("utf-8", "replace"), truncated
