"""`neuron-turn payloads prune`: remove the large payloads no workflow history needs any more.

`--payload-dir DIR` keeps a Temporal turn's large payloads as files in DIR,
and nothing else removes them. `payloads prune --payload-dir DIR
--older-than 90d` removes those not written or read for longer than that
(neuron-orch-temporal's `retention`); `--dry-run` lists them instead.

The only import of a plugin in the core: the command line has no way for a
plugin to add a command, and the directory's layout is the plugin's to know.
It is imported when the command runs, and needs the plugin, not temporalio.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from datetime import timedelta
from typing import TYPE_CHECKING, Final

from ._errors import EXIT_OK, EXIT_PAYLOADS, EXIT_PLUGIN, epilog
from ._visible import shown_on

if TYPE_CHECKING:
    # The core is type-checked without the plugins on its path; each plugin with them.
    from neuron_orch_temporal.retention import (  # type: ignore[import-not-found,unused-ignore]
        PruneReport,
    )

__all__ = ["add_payloads_parser", "duration"]

PROG: Final = "neuron-turn"
_UNITS: Final = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}
_DURATION: Final = re.compile(r"(?:(\d+)([smhdw]))+")
_PART: Final = re.compile(r"(\d+)([smhdw])")


def add_payloads_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `payloads` command (its subcommand `prune`) to the command line."""
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
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
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


def duration(text: str) -> timedelta:
    """Parse a duration such as `90d`, `36h` or `1w3d`, for argparse.

    Raises:
        argparse.ArgumentTypeError: naming what was given and the form it takes.
    """
    if not _DURATION.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(
            f"not a duration: {text!r} (a number and a unit, s m h d w, e.g. 90d or 1w3d)"
        )
    seconds = sum(int(count) * _UNITS[unit] for count, unit in _PART.findall(text))
    return timedelta(seconds=seconds)


def prune_command(args: argparse.Namespace) -> int:
    """Run `neuron-turn payloads prune` (see the module doc)."""
    try:
        from neuron_orch_temporal.errors import (  # type: ignore[import-not-found,unused-ignore]
            PruneRefusedError,
        )
        from neuron_orch_temporal.retention import (  # type: ignore[import-not-found,unused-ignore]
            prune_payloads,
        )
    except ImportError as exc:
        _say(
            f"{PROG}: error: payloads prune needs plugin neuron-orch-temporal ({exc}); "
            "install it with: pip install neuron-orch-temporal"
        )
        return EXIT_PLUGIN
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
    # A path in the directory may be anyone's name: on a terminal, shown inert.
    print(shown_on(sys.stderr)(line), file=sys.stderr)
