"""MkDocs hooks: pages generated from the code while the site is built.

`docs/reference/cli.md` and `docs/reference/exit-codes.md` hold a marker
comment where the generated text goes: the `--help` of `neuron-turn` and of
each subcommand, rendered from the argparse parser, and the table of exit
codes from `neuron_turn.cli._errors`. Nothing generated is committed, so the
reference cannot go stale; a marker left unused, or one that is missing,
fails the build.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

CLI_MARKER = "<!-- generated: cli-reference -->"
EXIT_CODES_MARKER = "<!-- generated: exit-codes -->"
HELP_WIDTH = "88"

_used: set[str] = set()


def on_pre_build(config: Any) -> None:
    """Forget the markers found by a previous build (`mkdocs serve` rebuilds)."""
    _used.clear()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker in `markdown` with the text generated for it."""
    for marker, render in ((CLI_MARKER, cli_reference), (EXIT_CODES_MARKER, exit_codes)):
        if marker in markdown:
            markdown = markdown.replace(marker, render())
            _used.add(marker)
    return markdown


def on_post_build(config: Any) -> None:
    """Fail the build when a page lost its marker, so a generated page cannot go empty."""
    missing = {CLI_MARKER, EXIT_CODES_MARKER} - _used
    if missing:
        raise RuntimeError(f"docs: no page holds the marker(s) {', '.join(sorted(missing))}")


def cli_reference() -> str:
    """Return the help of `neuron-turn` and of each of its commands, as Markdown."""
    from neuron_turn.cli import _parser

    parser = _parser()
    sections = [_help_block(parser)]
    for name, command in _subcommands(parser).items():
        sections.append(f"## `neuron-turn {name}`\n\n{_help_block(command)}")
    return "\n\n".join(sections)


def exit_codes() -> str:
    """Return the exit-code table of the command line as a Markdown table."""
    from neuron_turn.cli._errors import _CODES

    rows = [f"| `{code}` | {meaning} |" for code, meaning in _CODES]
    return "\n".join(["| code | meaning |", "|---:|---|", *rows])


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_block(parser: argparse.ArgumentParser) -> str:
    # argparse wraps help at the terminal's width; fix it so builds agree.
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        text = parser.format_help()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return f"```text\n{text.rstrip()}\n```"
