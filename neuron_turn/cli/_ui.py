"""`neuron-turn ui`: the local web viewer of the state file's turn records.

It opens the state file read-only and serves `neuron_turn.viewer` on
127.0.0.1 (a random free port unless `--port`), behind a token it makes
unless `--token` gives one; the URL to open, token included, is printed on
stdout. Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ._closing import close_resource
from ._errors import EXIT_OK, EXIT_USAGE
from ._show import open_records
from ._state_option import add_state_argument, shown_state

__all__ = ["add_ui_parser"]


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
    ui.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    ui.add_argument(
        "--token", metavar="TOKEN", help="the token to require (default: a new random one)"
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
            token=args.token,
            extra_hosts=args.allowed_host,
            where=where,
            on_ready=ready,
        )
    finally:
        await close_resource(records)
