"""`neuron-temporal payloads prune`: remove the large payloads no workflow history needs.

`--payload-dir DIR` keeps a Temporal turn's large payloads as files in DIR,
and nothing else removes them. `neuron-temporal payloads prune --payload-dir
DIR --older-than 90d` removes those not written or read for longer than that
(`retention`); `--dry-run` lists them instead. A command of the plugin's own,
not of `neuron-turn`: the directory's layout is the plugin's to know, and the
core imports no plugin. It needs no temporalio.

Exit codes: 0 done, 2 bad usage, 17 refused (a directory missing or
unreadable, an age under 1d: nothing removed) or some files not removed.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import Final, NoReturn

from .errors import PruneRefusedError
from .retention import PruneReport, prune_payloads

__all__ = ["EXIT_OK", "EXIT_PAYLOADS", "EXIT_USAGE", "duration", "main"]

PROG: Final = "neuron-temporal"
EXIT_OK: Final = 0
EXIT_USAGE: Final = 2
EXIT_PAYLOADS: Final = 17
"""The prune refused (nothing removed), or some files could not be removed."""
_UNITS: Final = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}
_DURATION: Final = re.compile(r"(?:(\d+)([smhdw]))+")
_PART: Final = re.compile(r"(\d+)([smhdw])")


def main(argv: Sequence[str] | None = None) -> int:
    """Run `neuron-temporal` with `argv` (default: `sys.argv[1:]`); return the exit code."""
    args = _parser().parse_args(argv)
    code: int = args.handler(args)
    return code


class _Parser(argparse.ArgumentParser):
    """Usage errors on one line, as `neuron-turn` has them."""

    def error(self, message: str) -> NoReturn:
        line = f"{self.prog}: error: {' '.join(message.split())} (usage: {self.prog} --help)"
        self.exit(EXIT_USAGE, line + "\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Look after what neuron-orch-temporal keeps outside Temporal.",
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    payloads = commands.add_parser(
        "payloads",
        help="look after the payload directory of --payload-dir (prune old payloads)",
        description="Look after the directory where --payload-dir keeps Temporal's large "
        "payloads (images, documents) out of workflow histories.",
    )
    actions = payloads.add_subparsers(title="commands", required=True, metavar="COMMAND")
    prune = actions.add_parser(
        "prune",
        help="remove the payloads not written or read for longer than --older-than",
        description="Remove the payload files in DIR not written or read for longer than "
        "--older-than, and print how many and how many bytes. A payload is needed as long "
        "as its workflow's history is: give more than the Temporal namespace's retention "
        "period plus the longest a workflow runs (at least 1d). Files in DIR that are not "
        "payloads are left alone.",
    )
    prune.add_argument(
        "--payload-dir", required=True, metavar="DIR", help="the directory the workers use"
    )
    prune.add_argument(
        "--older-than",
        required=True,
        type=duration,
        metavar="DURATION",
        help="unused for longer than this: a number and a unit (s, m, h, d, w), e.g. 90d, 1w3d",
    )
    prune.add_argument(
        "--dry-run", action="store_true", help="list what would be removed; remove nothing"
    )
    prune.set_defaults(handler=prune_command)
    return parser


def duration(text: str) -> timedelta:
    """Parse a duration such as `90d`, `36h` or `1w3d`, for argparse.

    Raises:
        argparse.ArgumentTypeError: naming what was given and the form it takes.
    """
    if not _DURATION.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(
            f"not a duration: {_shown(text)} (a number and a unit, s m h d w, e.g. 90d or 1w3d)"
        )
    try:
        seconds = sum(int(count) * _UNITS[unit] for count, unit in _PART.findall(text))
        return timedelta(seconds=seconds)
    except (OverflowError, ValueError):  # past timedelta, or digits past int()'s limit
        raise argparse.ArgumentTypeError(
            f"too long: {_shown(text)} (at most {timedelta.max.days}d)"
        ) from None


def _shown(text: str) -> str:
    """`text` quoted for a message, its middle cut when long (a usage line stays one line)."""
    return repr(text) if len(text) <= 40 else repr(f"{text[:20]}...{text[-10:]}")


def prune_command(args: argparse.Namespace) -> int:
    """Run `neuron-temporal payloads prune` (see the module doc)."""
    try:
        report = asyncio.run(
            prune_payloads(args.payload_dir, args.older_than, dry_run=args.dry_run)
        )
    except PruneRefusedError as exc:
        _say(f"{PROG}: error: {exc}")
        return EXIT_PAYLOADS
    _print(report)
    for path, reason in report.failed:
        _say(f"{PROG}: error: could not remove {path}: {reason}")
    return EXIT_PAYLOADS if report.failed else EXIT_OK


def _print(report: PruneReport) -> None:
    verb = "would remove" if report.dry_run else "removed"
    if report.dry_run:
        for file in report.removed:
            used = file.last_used.strftime("%Y-%m-%d %H:%M UTC")
            print(f"{verb} {file.path} ({file.size:,} bytes, last used {used})")
    count = len(report.removed)
    print(
        f"{verb} {count} file{'' if count == 1 else 's'} ({report.removed_bytes:,} bytes) "
        f"from {report.directory}; kept {report.kept} "
        f"payload{'' if report.kept == 1 else 's'} used more recently"
    )


def _say(line: str) -> None:
    # Only our own files are named (hex digests) and the directory given; `!r`-free.
    print(line, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
