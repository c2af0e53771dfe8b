"""`neuron-turn revoke`: take back the decisions a person gave for good in a session.

A decision given `always` (the prompt's `a` or `v`, `resume --always`) decides a
tool's later calls in its session too (`neuron_turn.loop.standing`).
`revoke SESSION` takes back all of that session's, `revoke SESSION TOOL...`
those of the tools named: their later calls wait for a person again.
`neuron-turn sessions` lists them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from layer0 import SessionScope, StateStore

from ..loop.standing import STANDING_KEY, standing_from_json, standing_json
from ._approve import PROG
from ._closing import close_resource
from ._errors import EXIT_NOT_FOUND, EXIT_OK
from ._sessions import session_id
from ._state_option import add_state_argument, open_state_store
from ._visible import shown_on

__all__ = ["add_revoke_parser"]


def add_revoke_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `revoke` command to the command line's subcommands."""
    revoke = commands.add_parser(
        "revoke",
        help="take back the decisions given for good (--always) in a session",
        description="Take back the decisions a person gave for good in SESSION (the prompt's "
        "`always` or `never`, `resume --always`): all of them, or those of the TOOLs named. "
        "Those tools' later calls wait for a person again. `neuron-turn sessions` lists them.",
    )
    revoke.add_argument("session", type=session_id, metavar="SESSION", help="the session's id")
    revoke.add_argument("tools", nargs="*", metavar="TOOL", help="only these tools' decisions")
    add_state_argument(revoke)
    revoke.set_defaults(handler=revoke_command)


def revoke_command(args: argparse.Namespace) -> int:
    """Run `neuron-turn revoke` (see the module doc)."""
    return asyncio.run(_revoke(args.state, args.session, args.tools))


async def _revoke(path: str | None, session: str, tools: Sequence[str]) -> int:
    store: StateStore = open_state_store(path)
    scope = SessionScope(id=session)
    try:
        # Read plainly: a state file that cannot be used is the state file's error (its code).
        standing = standing_from_json(session, await store.read(scope, STANDING_KEY))
        named = set(tools) if tools else set(standing)
        unknown = sorted(named - set(standing))
        if unknown:
            given = ", ".join(sorted(standing)) or "none"
            _say(
                f"{PROG}: error: no decision for good for {', '.join(unknown)} in session "
                f"{session!r} (it has: {given}); `neuron-turn sessions` lists them"
            )
            return EXIT_NOT_FOUND
        left = {name: decided for name, decided in standing.items() if name not in named}
        if left:
            await store.write(scope, STANDING_KEY, standing_json(left))
        elif standing:
            await store.delete(scope, STANDING_KEY)
    finally:
        await close_resource(store)
    if not named:
        _say(f"{PROG}: session {session!r} has no decisions given for good; nothing to take back")
    else:
        _say(
            f"{PROG}: took back the decisions for good for {', '.join(sorted(named))} in "
            f"session {session!r}: their calls wait for a person again"
        )
    return EXIT_OK


def _say(line: str) -> None:
    # Tool names and session ids may be the model's: on a terminal, shown inert.
    print(shown_on(sys.stderr)(line), file=sys.stderr)
