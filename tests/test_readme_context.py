"""The README's "Long sessions" command line means what it says (the docs test runs the Python)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from neuron_turn.cli import _parser, _turn_spec

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(language: str) -> list[str]:
    text = README.read_text()
    section = text.split("## Long sessions: context strategies", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)


def test_the_command_line_example_parses_to_the_strategy_it_names() -> None:
    (command,) = _blocks("bash")
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[0] == "neuron-turn"
    spec = _turn_spec(_parser().parse_args(argv[1:]))
    assert spec.context == "tiered"
    assert spec.context_options == {"keep": 5, "model": "claude-haiku-4-5"}
    assert spec.context_limit == 150_000
