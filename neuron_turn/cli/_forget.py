"""`neuron-turn forget`: delete a conversation and everything kept of it, for good.

`forget SESSION` deletes what `neuron_turn.forget_session` deletes (the
session's history, memory, standing decisions, paused options, kept counts,
turn records, those of the sessions it delegated to, and the turn records of
the runs it delegated to without a session), with the command line's own
entries of it: its line in `neuron-turn sessions` and its runs. It
says first what will go and asks on a terminal; `--yes` does not ask, and
without a terminal it is needed. A fork is a session of its own and stays.
Each refusal has its own line and exit code; a refused forget deletes nothing,
except on a store without transactions failing part-way, whose line names
what remains.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from layer0 import HISTORY_KEY, Scope, StateReader, StateStore

from ..loop.forget import (
    DelegationsUnreadableError,
    ForgetError,
    ForgottenSession,
    KeptSession,
    NothingKeptError,
    PartlyForgottenError,
    forget_session,
    kept_of_session,
)
from ._approve import PROG
from ._closing import close_resource
from ._errors import EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_STATE, EXIT_USAGE
from ._sessions import INDEX_PREFIX, close_sessions, run_keys, session_id
from ._state_option import add_state_argument, open_state_store, shown_state
from ._visible import shown_on
from ._waiting import on_terminal

__all__ = ["add_forget_parser", "forget_command"]

_YES = ("y", "yes")


def add_forget_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `forget` command to the command line's subcommands."""
    forget = commands.add_parser(
        "forget",
        help="delete a conversation and everything kept of it, for good",
        description="Delete SESSION for good: its history, the memory written in it, the "
        "decisions given for good (--always), a paused turn's options, its turn records "
        "(`neuron-turn show`), its line in `neuron-turn sessions`, the same of the "
        "sessions its turns delegated to, and the turn records of the runs they delegated "
        "to without a session (those of a one-way delegation or a raised turn kept before "
        "records named the session they were delegated for are not found). Another "
        "session is never touched; a fork "
        "(`neuron-turn fork`) is a session of its own and stays. Says what will go and asks "
        "first; --yes does not ask (and is needed without a terminal).",
    )
    forget.add_argument("session", type=session_id, metavar="SESSION", help="the session to forget")
    forget.add_argument("--yes", action="store_true", help="do not ask: forget it")
    forget.add_argument(
        "--only-this",
        action="store_true",
        help="keep the sessions and runs its turns delegated to (default: forget them too)",
    )
    add_state_argument(forget)
    forget.add_argument("--json", action="store_true", help="print JSON for machines")
    forget.set_defaults(handler=forget_command)


def forget_command(args: argparse.Namespace) -> int:
    """Run `neuron-turn forget` (see the module doc)."""
    delegated = not args.only_this
    try:
        plan = asyncio.run(_plan(args.state, args.session, delegated))
        if not args.yes:
            refused = _confirmed(args.session, plan)
            if refused is not None:
                return refused
        forgotten = asyncio.run(_forget(args.state, args.session, delegated))
    except ForgetError as exc:
        code, line = _refusal(exc, args)
        _say(f"{PROG}: error: {line}")
        return code
    if args.json:
        print(json.dumps(_as_json(forgotten)))
    _say(f"{PROG}: forgot {_contents(forgotten.sessions, len(forgotten.also))}")
    return EXIT_OK


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a forget will delete, as read before asking."""

    sessions: tuple[KeptSession, ...]
    listed: int
    """The command line's own keys of the session (its index line and runs)."""


async def _plan(state: str | None, session: str, delegated: bool) -> _Plan:
    """Read what is kept of `session`; refuse one of which nothing is."""
    # Read-only: a mistyped session or state path creates no state file.
    reader: StateReader = open_state_store(state, read_only=True)
    try:
        sessions = await kept_of_session(reader, session, delegated=delegated)
        listed = await _listed_keys(reader, session)
        if all(kept.empty for kept in sessions) and not listed:
            raise NothingKeptError(session, await close_sessions(reader, session))
        return _Plan(sessions, len(listed))
    finally:
        await close_resource(reader)


async def _forget(state: str | None, session: str, delegated: bool) -> ForgottenSession:
    store: StateStore = open_state_store(state)
    try:
        also = await _listed_keys(store, session)
        return await forget_session(store, session, delegated=delegated, also=also)
    finally:
        await close_resource(store)


async def _listed_keys(store: StateReader, session: str) -> list[tuple[Scope, str]]:
    """The command line's keys of `session` in the global scope: its index line, its runs."""
    index = INDEX_PREFIX + session
    runs = await run_keys(store, session)
    found = [index] if await store.read("global", index) is not None else []
    return [("global", key) for key in [*found, *runs]]


def _confirmed(session: str, plan: _Plan) -> int | None:
    """Ask on a terminal whether to forget; None: go on, else the exit code to end with."""
    if not (on_terminal(sys.stdin) and on_terminal(sys.stderr)):
        _say(
            f"{PROG}: error: forget deletes for good, so it asks first and there is no "
            f"terminal to ask on; give --yes to forget {_contents(plan.sessions, plan.listed)}"
        )
        return EXIT_USAGE
    _say(f"{PROG}: this deletes for good {_contents(plan.sessions, plan.listed)}")
    sys.stderr.write(shown_on(sys.stderr)(f"forget session {session!r}? [y/N] "))
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if answer.strip().lower() in _YES:
        return None
    _say(f"{PROG}: not forgotten: nothing was deleted")
    return EXIT_ERROR


def _contents(sessions: Sequence[KeptSession], listed: int) -> str:
    """What is kept of a session and those it delegated to, in words."""
    first, *delegated = sessions
    parts = [f"{first.messages} message(s)", f"{first.turns_recorded} turn record(s)"]
    others = len([key for key in first.keys if key != HISTORY_KEY])
    parts.append(f"{others} other key(s)")
    if listed:
        parts.append(f"{listed} key(s) listing it in `neuron-turn sessions`")
    if delegated:
        messages = sum(kept.messages for kept in delegated)
        parts.append(f"{len(delegated)} delegated session(s) ({messages} message(s))")
    runs = len({turn for kept in sessions for turn in kept.delegated_turns})
    if runs:
        parts.append(f"{runs} turn record(s) of runs delegated to without a session")
    return f"session {first.session!r}: {', '.join(parts)}"


def _refusal(exc: ForgetError, args: argparse.Namespace) -> tuple[int, str]:
    """The exit code of a forget refused with `exc`, and the line saying why."""
    if isinstance(exc, NothingKeptError):
        return EXIT_NOT_FOUND, f"{exc}; `neuron-turn sessions` lists the kept ones"
    if isinstance(exc, DelegationsUnreadableError):
        return EXIT_ERROR, str(exc)
    if isinstance(exc, PartlyForgottenError):
        state = "" if args.state is None else f" --state {shlex.quote(shown_state(args.state))}"
        again = f"{PROG} forget {shlex.quote(exc.session)} --yes{state}"
        return EXIT_STATE, f"{exc} (here: {again})"
    return EXIT_STATE, str(exc)  # ForgetFailedError, TurnRecordsUndeletableError


def _as_json(forgotten: ForgottenSession) -> dict[str, JsonValue]:
    return {
        "session": forgotten.session,
        "sessions": [
            {
                "session": kept.session,
                "messages": kept.messages,
                "keys": [*kept.keys],
                "turns_recorded": kept.turns_recorded,
                "delegated_turns": [*kept.delegated_turns],
            }
            for kept in forgotten.sessions
        ],
        "listed": [key for _, key in forgotten.also],
        "entries": forgotten.entries,
    }


def _say(line: str) -> None:
    # Session ids may be anyone's: on a terminal, shown inert.
    print(shown_on(sys.stderr)(line), file=sys.stderr)
