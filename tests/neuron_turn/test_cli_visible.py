"""A model's text on a terminal: control characters shown, never acted on; piped, kept whole."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_turn.cli._approve import Prompter
from neuron_turn.cli._stream_output import TextPrinter
from neuron_turn.cli._visible import visible
from neuron_turn.loop.events import TextDelta, ToolResult
from tests.terminal import Terminal

PLUGINS = "fixture-plugin,state-sqlite,orch-local"
# Clear the screen, set the window title, write the clipboard (OSC 52), a CSI
# introducer in its 8-bit form, a bell; then an overwrite by carriage return.
HOSTILE = "ok \x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x9b31m\rfake"

pytestmark = pytest.mark.usefixtures("fixture_plugins")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("NEURON_")},
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
    }


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_control_characters_are_written_out_and_text_is_kept() -> None:
    assert visible(HOSTILE) == (
        "ok \\x1b[2J\\x1b]0;pwned\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07\\x9b31m\\x0dfake"
    )
    assert visible("two\r\nlines\tand é, 中文, \u200b") == "two\nlines\tand é, 中文, \u200b"
    assert visible("\x00\x7f") == "\\x00\\x7f"


def test_the_printer_shows_untrusted_text_inert_on_a_terminal_and_whole_on_a_pipe() -> None:
    out, err = _Terminal(), _Terminal()
    printer = TextPrinter(out, err, progress=True)
    printer(TextDelta(HOSTILE))
    printer(ToolResult("c1", "fetch", "page \x1b]8;;http://evil\x07link", False, 3))
    assert "\x1b" not in out.getvalue() + err.getvalue()
    assert out.getvalue() == visible(HOSTILE) + "\n"  # the activity line ends the answer's line
    assert "\\x1b]8;;http://evil\\x07link" in err.getvalue()

    piped = io.StringIO()
    TextPrinter(piped, io.StringIO(), progress=False)(TextDelta(HOSTILE))
    assert piped.getvalue() == HOSTILE


def test_a_real_terminal_never_receives_the_models_escape_sequences(
    env: dict[str, str],
) -> None:
    command = [sys.executable, "-m", "neuron_turn", "run", "--model", "fixture:echo", HOSTILE]
    with Terminal(command, env=env) as terminal:
        terminal.expect(r"fake")
        assert terminal.wait() == 0
        raw = terminal.raw
    shown = raw[raw.index("echo: ") :]
    assert "echo: ok \\x1b[2J\\x1b]0;pwned\\x07" in shown
    assert "\x1b]" not in raw and "\x07" not in raw and "\x9b" not in raw
    assert "\x1b[2J" not in raw


def test_piped_output_is_the_models_text_byte_for_byte(env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "neuron_turn", "run", "--model", "fixture:echo", HOSTILE]
    done = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"echo: {HOSTILE}\n".encode()


def test_an_approval_question_shows_a_hostile_call_id_inert() -> None:
    # An id that returns the cursor and rewrites the line could show a harmless call
    # in place of the one the person is asked about.
    err = _Terminal()
    prompter = Prompter(io.StringIO(), err)
    prompter._say("  c1\r\x1b[K  c1: read_file {}: shell {}")
    assert err.getvalue() == "  c1\\x0d\\x1b[K  c1: read_file {}: shell {}\n"
