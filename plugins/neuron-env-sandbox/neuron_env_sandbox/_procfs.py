"""Finding and ending a child's processes through /proc, so none outlives its run.

A child that forks and calls `setsid` leaves its process group; the child is
its descendants' subreaper, so they stay below it in the process tree until
it dies, where `descendants` finds them. Processes are stopped before they
are killed, so a fork bomb cannot outrun the sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Final

__all__ = ["descendants", "end_tree", "holders", "live", "processes_of"]

_PROC: Final = Path("/proc")
_SWEEPS: Final = 200
_DEAD_STATES: Final = frozenset({"Z", "X", "x"})


def _stat(pid: int) -> tuple[str, int] | None:
    """Return the state letter and parent pid of `pid`, or None if it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def _pids() -> list[int]:
    return [int(entry.name) for entry in _PROC.iterdir() if entry.name.isdigit()]


def live(pids: Iterable[int]) -> set[int]:
    """Return those of `pids` that still run (zombies, waiting to be reaped, do not)."""
    return {pid for pid in pids if (stat := _stat(pid)) is not None and stat[0] not in _DEAD_STATES}


def descendants(root: int) -> set[int]:
    """Return every live process below `root` in the process tree."""
    children: dict[int, list[int]] = {}
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[0] not in _DEAD_STATES:
            children.setdefault(stat[1], []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def processes_of(uid: int) -> set[int]:
    """Return the live processes whose real uid is `uid`."""
    found: set[int] = set()
    for pid in _pids():
        try:
            status = (_PROC / str(pid) / "status").read_text()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                if int(line.split()[1]) == uid:
                    found.add(pid)
                break
    return live(found)


def holders(pipe: int) -> set[int]:
    """Return the processes holding a descriptor of the pipe whose inode is `pipe`."""
    target = f"pipe:[{pipe}]"
    found: set[int] = set()
    for pid in _pids():
        try:
            descriptors = os.listdir(_PROC / str(pid) / "fd")
        except OSError:
            continue
        for descriptor in descriptors:
            with contextlib.suppress(OSError):
                if os.readlink(_PROC / str(pid) / "fd" / descriptor) == target:
                    found.add(pid)
                    break
    return found


def _signal_all(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


async def end_tree(root: int) -> set[int]:
    """Stop every descendant of `root`, kill them all, then `root` and its group.

    Returns the processes that were killed (for the caller to wait on).
    """
    stopped: set[int] = set()
    for _ in range(_SWEEPS):
        found = descendants(root) - stopped
        if not found:
            break
        _signal_all(found, signal.SIGSTOP)
        stopped |= found
        await asyncio.sleep(0)
    _signal_all(stopped, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(root, signal.SIGKILL)
    _signal_all([root], signal.SIGKILL)
    return stopped | {root}
