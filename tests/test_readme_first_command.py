"""The README's first command, run as a new user runs it: its output matches the README.

On a terminal (a pseudo-terminal), under `env -i` with HOME, PATH and a data
folder only: no API key, no NEURON_* setting, none of this machine's CA or PIP
variables. The setup half of the command is `scripts/setup`
(tests/scripts/test_setup.py runs it under `env -i` too; run plainly here it
would remove the fixture plugin the other tests use); this test runs the turn
half exactly as the README writes it, on the embedded local model, and checks
each line the README shows, numbers and the session id left open (and the
model's own wording of its answer and of the calculator's input).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.scripts.test_setup import bare_path
from tests.terminal import Terminal

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def first_bash_block() -> str:
    text = README.read_text(encoding="utf-8")
    return re.search(r"```bash\n(.*?)\n```", text, re.S).group(1)  # type: ignore[union-attr]


def shown_output() -> list[str]:
    """The README's printed output of that command (the block after 'What a run does')."""
    text = README.read_text(encoding="utf-8").split("## What a run does", 1)[1]
    return re.search(r"```\n(.*?)\n```", text, re.S).group(1).splitlines()  # type: ignore[union-attr]


def as_pattern(line: str) -> str:
    """A README line with its numbers and session id left open."""
    pieces = re.split(r"([0-9a-f]{12}|\d+(?:\.\d+)?)", line)
    return "".join(_open(piece) if i % 2 else re.escape(piece) for i, piece in enumerate(pieces))


def _open(piece: str) -> str:
    if re.fullmatch(r"[0-9a-f]{12}", piece):
        return "[0-9a-f]{12}"
    return r"\d+\.\d+" if "." in piece else r"\d+"


def test_the_readme_first_command_prints_what_the_readme_shows(tmp_path: Path) -> None:
    setup, turn = first_bash_block().split(" && ")
    assert setup == "bash scripts/setup"
    argv = shlex.split(turn)
    assert argv[0] == ".venv/bin/neuron-turn"
    env = {"HOME": str(Path.home()), "PATH": bare_path(), "XDG_DATA_HOME": str(tmp_path)}
    with Terminal(argv, env=env, cwd=str(ROOT), timeout=600) as terminal:
        # Something shows at once: which model answers, then the first call.
        terminal.expect(r"neuron-turn: using local:default")
        assert terminal.wait() == 0, terminal.output
        shown = terminal.output.splitlines()
    expected = shown_output()
    assert len(shown) == len(expected), terminal.output
    for line, readme in zip(shown, expected, strict=True):
        assert re.fullmatch(model_words(readme) or as_pattern(readme), line), (readme, line)


def model_words(line: str) -> str | None:
    """A pattern for the lines the model words itself (its answer, the calculator's input)."""
    if line.startswith("[tool] calculator("):
        return r'\[tool\] calculator\(\{"expression": "17 ?\* ?23"\}\)'
    if "391" in line and not line.startswith("["):
        return r"[^\[].*\b391\b.*"
    return None
