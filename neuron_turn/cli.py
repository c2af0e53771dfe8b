"""The `neuron-turn` command (also `python -m neuron_turn`): list plugins, run one turn.

Errors a user can fix (a missing API key, an unknown provider, a provider
failure) end with one line on stderr and an exit code of their own, listed
in `--help`; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Final, TextIO

from layer0 import (
    Content,
    CustomExit,
    ExitReason,
    Layer0Error,
    ObserverHalt,
    TurnConfig,
    TurnInput,
    TurnOutput,
    usd,
)

from ._cli_errors import EXIT_INTERRUPTED, EXIT_OK, classify, epilog
from ._plugin_listing import listing_json, listing_text
from .plugin_errors import PluginError
from .plugins import get_plugin_manager
from .progress import ProgressHook
from .provider_errors import ProviderError
from .warnings import NeuronWarning, PluginLoadWarning

__all__ = ["main", "summary"]

PROG: Final = "neuron-turn"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`); return the exit code."""
    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            code: int = args.handler(args)
        except KeyboardInterrupt:
            _error("interrupted")
            return EXIT_INTERRUPTED
        except (PluginError, ProviderError, Layer0Error) as exc:
            code, line = classify(exc, model=getattr(args, "model", None))
            _error(line)
        return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run agent turns with NeuronTurn, built from installed plugins.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    listing = commands.add_parser(
        "plugins",
        help="list installed plugins, what they registered, and the ones that failed",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("--json", action="store_true", help="print JSON for machines")
    listing.set_defaults(handler=_plugins_command)
    _add_run_parser(commands)
    return parser


def _add_run_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help="run one turn and print the answer",
        description="Run one turn on PROMPT and print the answer on stdout and a one-line "
        "summary on stderr. Model and tool calls are shown on stderr as they happen when "
        "stderr is a terminal, or with --verbose.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("prompt", metavar="PROMPT", help="the user message")
    run.add_argument(
        "--model", required=True, metavar="P:M", help="e.g. anthropic:claude-haiku-4-5"
    )
    run.add_argument("--system", default="", metavar="TEXT", help="the system prompt")
    run.add_argument("--max-turns", type=_positive(int), metavar="N", help="most model calls")
    run.add_argument("--max-cost", type=_cost, metavar="USD", help="most USD to spend, e.g. 0.05")
    run.add_argument(
        "--max-duration", type=_positive(float), metavar="SECONDS", help="wall-clock limit"
    )
    run.add_argument(
        "--tool", action="append", default=[], metavar="NAME", help="use this plugin tool"
    )
    run.add_argument(
        "--allow-tool",
        action="append",
        metavar="NAME",
        help="allow only these tools (repeat; default: every tool the turn has)",
    )
    run.add_argument("--json", action="store_true", help="print only the TurnOutput JSON")
    run.add_argument("--verbose", action="store_true", help="show progress even when piped")
    run.set_defaults(handler=_run_command)


def _plugins_command(args: argparse.Namespace) -> int:
    with warnings.catch_warnings():
        # The listing shows every failure itself; a warning would say it twice.
        warnings.simplefilter("ignore", PluginLoadWarning)
        manager = get_plugin_manager()
    if args.json:
        print(json.dumps(listing_json(manager), indent=2))
    else:
        print(listing_text(manager))
    return EXIT_OK


def _run_command(args: argparse.Namespace) -> int:
    from .turn import NeuronTurn  # the loop, imported only when a turn runs

    turn = NeuronTurn.from_plugins(model=args.model, tools=args.tool, system=args.system)
    if args.verbose or sys.stderr.isatty():
        turn.hooks.add(ProgressHook(sys.stderr), name=ProgressHook.name, observer=True)
    turn_input = TurnInput(message=Content(args.prompt), trigger="user", config=_config(args))
    output = asyncio.run(turn.execute(turn_input))
    if args.json:
        print(output.model_dump_json())
    else:
        print(output.message.as_text() or "")
        print(summary(output), file=sys.stderr)
    return EXIT_OK


def _config(args: argparse.Namespace) -> TurnConfig:
    seconds: float | None = args.max_duration
    return TurnConfig(
        max_turns=args.max_turns,
        max_cost=None if args.max_cost is None else usd(args.max_cost),
        max_duration=None if seconds is None else max(1, round(seconds * 1000)),
        allowed_tools=args.allow_tool,
    )


def summary(output: TurnOutput) -> str:
    """Return the one-line summary: exit reason, turns, tokens, cost and duration."""
    meta = output.metadata
    reason = _reason_text(output.exit_reason)
    turns = f"{meta.turns_used} turn{'' if meta.turns_used == 1 else 's'}"
    tokens = f"{meta.tokens_in} tokens in / {meta.tokens_out} out"
    return f"{reason}, {turns}, {tokens}, ${meta.cost.amount:.4f}, {meta.duration / 1000:.1f}s"


def _reason_text(reason: ExitReason) -> str:
    if isinstance(reason, ObserverHalt):
        return f"observer_halt ({reason.reason})"
    if isinstance(reason, CustomExit):
        return f"custom ({reason.name})"
    return reason


def _positive(kind: Callable[[str], int | float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0; got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _cost(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not a USD amount: {text!r} (e.g. 0.05)") from None
    if not value.is_finite() or value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more; got {text}")
    return value


def _error(line: str, stream: TextIO | None = None) -> None:
    print(f"{PROG}: error: {' '.join(line.split())}", file=stream or sys.stderr)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    # Our own warnings are for users: one line, no source location.
    if issubclass(category, NeuronWarning):
        print(f"{PROG}: warning: {message}", file=file or sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr)
