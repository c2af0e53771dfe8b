"""`neuron-turn restore`: write an exchange the state refused, kept in a file, to the state.

A turn whose writes the state refused (`neuron_turn.cli._unsaved`) left them
in a file that `run` and `chat` named. `restore FILE...` writes each file's
writes in one transaction (all or none), its history append once by its turn
id (restoring twice keeps one copy), after whatever the session gained
since, then removes the file. A file the state refuses again is kept, and
nothing of it is written.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from layer0 import HistoryAppend, StateError

from ._approve import PROG
from ._closing import close_resource
from ._errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_STATE, EXIT_USAGE
from ._state_option import add_state_argument, open_state_store, shown_state
from ._unsaved import MemoryEffect, UnsavedFileError, read_unsaved
from ._visible import shown_on

__all__ = ["add_restore_parser", "restore_command"]


def add_restore_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `restore` command to the command line's subcommands."""
    restore = commands.add_parser(
        "restore",
        help="write an exchange the state refused (kept in a file by run or chat) to the state",
        description="Write the exchange kept in each FILE (a turn whose answer was shown but "
        "whose history and memory the state refused, e.g. a full disk) to the state: all of "
        "a file's writes or none, its history once however often it is restored. A file "
        "written removes it; one the state refuses again is kept.",
    )
    restore.add_argument("files", nargs="+", metavar="FILE", help="an unsaved exchange's file")
    add_state_argument(restore)
    restore.set_defaults(handler=restore_command)


def restore_command(args: argparse.Namespace) -> int:
    """Run `neuron-turn restore` (see the module doc)."""
    return asyncio.run(_restore(args.state, [Path(name) for name in args.files]))


async def _restore(state: str | None, files: Sequence[Path]) -> int:
    read: list[tuple[Path, str, tuple[MemoryEffect, ...]]] = []
    for path in files:
        try:
            read.append((path, *read_unsaved(path)))
        except FileNotFoundError:
            _say(f"{PROG}: error: restore: {path}: no such file; nothing was restored")
            return EXIT_NOT_FOUND
        except (OSError, UnsavedFileError) as exc:
            _say(f"{PROG}: error: restore: {_reason(path, exc)}; nothing was restored")
            return EXIT_USAGE
    store: Any = open_state_store(state)
    try:
        apply = getattr(store, "apply", None)
        if not callable(apply):
            _say(
                f"{PROG}: error: restore: the state store {type(store).__name__} cannot "
                "write several changes in one transaction; nothing was restored"
            )
            return EXIT_STATE
        for path, refused_by, effects in read:
            code = await _one(apply, path, refused_by, effects, state)
            if code != EXIT_OK:
                return code
    finally:
        await close_resource(store)
    return EXIT_OK


async def _one(
    apply: Any, path: Path, refused_by: str, effects: tuple[MemoryEffect, ...], state: str | None
) -> int:
    where = shown_state(state) or "the state file"
    try:
        await apply(effects)
    except StateError as exc:
        _say(
            f"{PROG}: error: restore: {where} refused {path} ({type(exc).__name__}: {exc}); "
            "nothing of it was written and the file is kept"
        )
        return EXIT_STATE
    try:
        path.unlink()
    except OSError as exc:
        _say(
            f"{PROG}: note: restore: {path} was written but could not be removed "
            f"({exc.strerror or type(exc).__name__}); restoring it again keeps one copy"
        )
    sessions = sorted({e.session for e in effects if isinstance(e, HistoryAppend)})
    kept = f" (the history of session {', '.join(sessions)})" if sessions else ""
    earlier = f"; it was refused by {refused_by}" if refused_by and refused_by != where else ""
    _say(f"{PROG}: restored {len(effects)} write(s){kept} from {path} to {where}{earlier}")
    return EXIT_OK


def _reason(path: Path, exc: OSError | UnsavedFileError) -> str:
    if isinstance(exc, UnsavedFileError):
        return str(exc)
    return f"{path}: {exc.strerror or type(exc).__name__}"


def _say(line: str) -> None:
    print(shown_on(sys.stderr)(line), file=sys.stderr)
