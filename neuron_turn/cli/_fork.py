"""`neuron-turn fork`: a new session holding the first turns of another, the original kept.

`fork SESSION --turns N` copies the first N turns of SESSION (as `neuron-turn
history` shows them: each message sent starts one) into a new session, which
`run --session` and `chat --session` then go on from; SESSION is left as it
was (`neuron_turn.fork_session` does it, and says what is copied). The new
id goes to stdout (`--json`: an object), how to continue it to stderr, and
the session index lists it with where it came from. A fork that cannot be
made writes nothing and exits with a code of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shlex
import sys

from layer0 import HistoryStore, StateError, StateReader

from ..loop.fork import (
    ForkedSession,
    ForkError,
    PendingCallsError,
    TargetExistsError,
    TurnsOutOfRangeError,
    UnknownSessionError,
    fork_session,
)
from ._approve import PROG
from ._closing import close_resource
from ._errors import (
    EXIT_AWAITING_APPROVAL,
    EXIT_ERROR,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
)
from ._sessions import (
    close_sessions,
    continue_hint,
    read_history,
    record_fork,
    session_id,
    session_to_use,
)
from ._state_option import add_state_argument, open_state_store, shown_state
from ._visible import shown_on

__all__ = ["add_fork_parser", "fork_command"]


def add_fork_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `fork` command to the command line's subcommands."""
    fork = commands.add_parser(
        "fork",
        help="copy a conversation's first turns into a new session, the original kept",
        description="Copy the first N turns of SESSION (all by default) into a new session "
        "and print its id: continue it with `run --session NEW_ID` to take the conversation "
        "another way from there. SESSION is left as it was. Turns are counted as "
        "`neuron-turn history` shows them: each message sent starts one, a tool's result "
        "never does. A turn that waits for approval cannot end a fork; the decisions given "
        "for good (`--always`) and the memory of SESSION are not copied.",
    )
    fork.add_argument("session", type=session_id, metavar="SESSION", help="the session to fork")
    fork.add_argument(
        "--turns", type=int, metavar="N", help="copy its first N turns (default: all of them)"
    )
    fork.add_argument(
        "--as",
        dest="into",
        type=session_to_use,
        metavar="NEW_ID",
        help="the new session's id, one that holds nothing yet (default: a fresh id)",
    )
    add_state_argument(fork)
    fork.add_argument("--json", action="store_true", help="print JSON for machines")
    fork.set_defaults(handler=fork_command)


def fork_command(args: argparse.Namespace) -> int:
    """Run `neuron-turn fork` (see the module doc)."""
    try:
        forked, listed = asyncio.run(_fork(args.state, args.session, args.into, args.turns))
    except ForkError as exc:
        code, line = _refusal(exc, args)
        _say(f"{PROG}: error: {line}")
        return code
    if args.json:
        print(json.dumps(dataclasses.asdict(forked)))
    else:
        print(shown_on(sys.stdout)(forked.session))
    _say(f"{PROG}: {_forked_line(forked)}")
    if listed is not None:
        _say(
            f"{PROG}: note: `neuron-turn sessions` does not list it, as the index could not "
            f"be written ({listed}); it is made all the same"
        )
    return EXIT_OK


async def _fork(
    state: str | None, source: str, into: str | None, turns: int | None
) -> tuple[ForkedSession, str | None]:
    """Fork `source`; return the fork, and why the index does not list it (None: it does)."""
    # Read-only first: a mistyped session or state path creates no state file.
    reader: StateReader = open_state_store(state, read_only=True)
    try:
        if await read_history(reader, source) is None:
            raise UnknownSessionError(source, await close_sessions(reader, source))
    finally:
        await close_resource(reader)
    store: HistoryStore = open_state_store(state)
    try:
        forked = await fork_session(store, source, into, turns=turns)
        try:
            await record_fork(store, forked)
        except StateError as exc:
            # The fork is made, and a second one is not wanted: say so, never "try again".
            return forked, str(exc)
        return forked, None
    finally:
        await close_resource(store)


def _refusal(exc: ForkError, args: argparse.Namespace) -> tuple[int, str]:
    """The exit code of a fork refused with `exc`, and the line saying why."""
    if isinstance(exc, UnknownSessionError):
        return EXIT_NOT_FOUND, f"{exc}; `neuron-turn sessions` lists the kept ones"
    if isinstance(exc, TurnsOutOfRangeError):
        return EXIT_USAGE, f"--turns: {exc}"
    if isinstance(exc, TargetExistsError):
        return EXIT_USAGE, f"--as: {exc}" if args.into is not None else str(exc)
    if isinstance(exc, PendingCallsError):
        return EXIT_AWAITING_APPROVAL, f"{exc} ({_ways_on(exc, args)})"
    return EXIT_ERROR, str(exc)  # UnreadableHistoryError


def _ways_on(exc: PendingCallsError, args: argparse.Namespace) -> str:
    """The commands that go on from a refused fork at a turn waiting for approval."""
    session = shlex.quote(exc.session)
    state = "" if args.state is None else f" --state {shlex.quote(shown_state(args.state))}"
    fork = (
        []
        if exc.fits is None
        else [f"fork there with: {PROG} fork {session} --turns {exc.fits}{state}"]
    )
    # The paused run's own options (model, tools) belong in the resume too: it said them.
    decide = (
        f"decide with: {PROG} resume {session} --approve ID or --deny ID, and the options "
        "of the run that paused"
    )
    return "; ".join([*fork, decide])


def _forked_line(forked: ForkedSession) -> str:
    if forked.turns < forked.source_turns:
        copied = f"the first {forked.turns} of {forked.source_turns} turns"
    else:
        copied = "its one turn" if forked.turns == 1 else f"all {forked.turns} turns"
    return f"forked {copied} of session {forked.source!r} into {continue_hint(forked.session)}"


def _say(line: str) -> None:
    # Session ids and tool names may be anyone's: on a terminal, shown inert.
    print(shown_on(sys.stderr)(line), file=sys.stderr)
