"""`neuron-turn ui`: the local web viewer of the state file's turn records.

It opens the state file read-only and serves `neuron_turn.viewer` on
127.0.0.1 (a random free port unless `--port`), behind a token it makes
unless `NEURON_UI_TOKEN` or `--token` gives one; the URL to open, token
included, is printed on stdout. Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Final

from ._closing import close_resource
from ._errors import EXIT_OK, EXIT_USAGE
from ._numbers import port_number
from ._show import open_records
from ._state_option import add_state_argument, shown_state

__all__ = ["TOKEN_VARIABLE", "add_ui_parser"]

TOKEN_VARIABLE: Final = "NEURON_UI_TOKEN"
"""The environment variable giving the viewer's token (as JUPYTER_TOKEN does Jupyter's).

Why not only `--token`: every local user can read a process's command line
(`ps`), and a loopback port is theirs to reach too; a process's environment
is its owner's alone to read.
"""


def add_ui_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `ui` command to the command line's subcommands."""
    ui = commands.add_parser(
        "ui",
        help="serve a local web page of the recorded sessions and turns (waterfalls)",
        description="Serve the turn records of the state file as web pages: sessions, their "
        "turns, and each turn's model and tool calls as a waterfall with tokens, cost and "
        "durations, its messages and effects. Binds 127.0.0.1 on a free port and prints the "
        "URL to open, with its token (every request needs it). Reads the file only. Ctrl-C "
        "stops it.",
    )
    add_state_argument(ui)
    ui.add_argument("--host", default="127.0.0.1", help="the address to bind (default: 127.0.0.1)")
    ui.add_argument("--port", type=port_number, default=0, help="the port (default: a free one)")
    ui.add_argument(
        "--token",
        metavar="TOKEN",
        help=f"the token to require (default: ${TOKEN_VARIABLE}, else a new random one); "
        f"other local users can read it in the process list, so prefer ${TOKEN_VARIABLE}",
    )
    ui.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="with a wider --host: a name browsers reach it by (repeat); required for 0.0.0.0",
    )
    ui.set_defaults(handler=ui_command)


def ui_command(args: argparse.Namespace) -> int:
    """Run `neuron-turn ui` until interrupted (see the module doc)."""
    from ..viewer import ViewerSetupError  # Starlette and uvicorn: only for this command

    try:
        asyncio.run(_serve(args))
    except ViewerSetupError as exc:
        print(f"neuron-turn: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


async def _serve(args: argparse.Namespace) -> None:
    from ..viewer import serve_viewer

    records = open_records(args.state)
    # A database URL is shown without its password.
    where = str(getattr(records, "path", None) or shown_state(args.state))

    def ready(url: str) -> None:
        print(f"neuron-turn ui: the turns of {where} at {url}", flush=True)
        print("(Ctrl-C stops it)", file=sys.stderr, flush=True)

    try:
        await serve_viewer(
            records,
            host=args.host,
            port=args.port,
            token=_token(args.token),
            extra_hosts=args.allowed_host,
            where=where,
            on_ready=ready,
        )
    finally:
        await close_resource(records)


def _token(given: str | None) -> str | None:
    """The token asked for: `--token`, else `TOKEN_VARIABLE`'s (checked, naming it), else None.

    Raises:
        ViewerSetupError: the variable's token is too short or not URL-safe.
    """
    from ..viewer import ViewerSetupError
    from ..viewer.guard import check_token

    if given is not None:
        return given
    token = os.environ.get(TOKEN_VARIABLE) or None
    if token is not None:
        try:
            check_token(token)
        except ViewerSetupError as exc:
            raise ViewerSetupError(f"{TOKEN_VARIABLE}: {exc}") from exc
    return token
