"""The waiting line: what a turn waits for, on a terminal at once, when piped only after long."""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path

from neuron_turn.cli._waiting import PIPED_EVERY, PIPED_FIRST, WaitingLine
from neuron_turn.loop.events import ModelCallStart, TextDelta, ToolStart
from tests.terminal import Terminal


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_on_a_terminal_the_line_shows_after_a_second_and_is_erased_before_output() -> None:
    err, clock = io.StringIO(), Clock()
    line = WaitingLine(err, terminal=True, clock=clock)
    line.note(ModelCallStart(call=1))
    clock.now += 0.5
    line.tick()
    assert err.getvalue() == ""
    clock.now += 1.0
    line.tick()
    assert err.getvalue() == "\r\033[Kneuron-turn: waiting for the model (call 1) (1s)"
    line.note(TextDelta(text="hi"))
    assert err.getvalue().endswith("(1s)\r\033[K")  # erased before the text is written
    assert not line.drawn


def test_on_a_terminal_the_line_can_show_at_once_and_stays_until_output() -> None:
    err, clock = io.StringIO(), Clock()
    line = WaitingLine(err, terminal=True, clock=clock)
    line.show_now()
    assert err.getvalue() == "\r\033[Kneuron-turn: waiting for the turn to start (0s)"
    line.tick()  # nothing new to say yet
    assert err.getvalue().count("waiting for") == 1
    piped = io.StringIO()
    WaitingLine(piped, terminal=False, clock=clock).show_now()
    assert piped.getvalue() == ""


def test_the_line_waits_while_the_answer_is_mid_line_on_the_same_terminal() -> None:
    err, clock = io.StringIO(), Clock()
    mid_line = True
    line = WaitingLine(err, terminal=True, clock=clock, may_draw=lambda: not mid_line)
    line.note(TextDelta(text="half an ans"))
    clock.now += 5
    line.tick()
    assert err.getvalue() == ""


def test_when_piped_a_line_comes_only_after_a_long_silence_then_seldom() -> None:
    err, clock = io.StringIO(), Clock()
    line = WaitingLine(err, terminal=False, clock=clock)
    line.note(ToolStart(id="c", name="slow_tool", input={}))
    clock.now += PIPED_FIRST - 1
    line.tick()
    assert err.getvalue() == ""
    clock.now += 1
    line.tick()
    line.tick()
    assert err.getvalue() == f"neuron-turn: waiting for tool slow_tool ({int(PIPED_FIRST)}s)\n"
    clock.now += PIPED_EVERY
    line.tick()
    assert err.getvalue().splitlines()[-1] == (
        f"neuron-turn: waiting for tool slow_tool ({int(PIPED_FIRST + PIPED_EVERY)}s)"
    )
    assert "\r" not in err.getvalue()


def test_other_notes_on_stderr_erase_the_line_first() -> None:
    err, clock = io.StringIO(), Clock()
    line = WaitingLine(err, terminal=True, clock=clock)
    clock.now += 2
    line.tick()
    with line.owning_stderr():
        print("neuron-turn: using local:default", file=sys.stderr)
    assert err.getvalue().endswith("(2s)\r\033[Kneuron-turn: using local:default\n")


def open_gate(gate: Path, timeout: float = 60.0) -> None:
    """Let the fixture's gated model go on; fail (not hang) if it never waits at the gate."""
    opener = threading.Thread(target=gate.write_text, args=("open",), daemon=True)
    opener.start()
    opener.join(timeout)
    assert not opener.is_alive(), "the model never reached its gate"


def test_a_terminal_shows_what_the_turn_waits_for_and_erases_it(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    env = {
        **os.environ,
        "NEURON_LOAD_PLUGINS": "fixture-plugin,state-sqlite,orch-local",
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
        "FIXTURE_GATE": str(gate),
    }
    answer = tmp_path / "answer.txt"
    argv = [sys.executable, "-m", "neuron_turn", "run", "go", "--model", "fixture:gated"]
    with answer.open("wb") as out, Terminal(argv, env=env, stdout=out.fileno()) as terminal:
        # stdout is a file, stderr the terminal: the model is stuck after its first word.
        terminal.expect(r"neuron-turn: waiting for the rest of the answer \(\d+s\)")
        open_gate(gate)
        terminal.expect(r"complete, 1 turn, ")
        assert terminal.wait() == 0
        assert "waiting for" not in terminal.output  # erased once the answer went on
        assert terminal.output.startswith("[model] call 1\n")
    assert answer.read_text() == "first second\n"


def test_held_for_a_question_the_line_draws_nothing_until_the_next_event() -> None:
    err, clock = io.StringIO(), Clock()
    line = WaitingLine(err, terminal=True, clock=clock)
    line.note(ModelCallStart(call=1))
    clock.now += 2
    line.tick()
    assert err.getvalue().endswith("(2s)")
    line.hold()  # `run it? [y]es / [n]o / [e]dit / [a]lways / ne[v]er:` is on the terminal now
    assert err.getvalue().endswith("\r\033[K") and not line.drawn
    drawn = err.getvalue()
    clock.now += 30
    line.tick()
    assert err.getvalue() == drawn
    # The answer came: the turn goes on, and its wait is timed from now, not the question.
    line.note(ToolStart(id="c1", name="add", input={}))
    clock.now += 1.5
    line.tick()
    assert err.getvalue().endswith("\r\033[Kneuron-turn: waiting for tool add (1s)")


def test_a_wait_the_command_announces_is_timed_afresh_and_named() -> None:
    err, clock = io.StringIO(), Clock()
    line = WaitingLine(err, terminal=False, clock=clock)
    line.note(ModelCallStart(call=2))
    clock.now += 4
    line.expect("the worker to stop the turn")  # Ctrl-C: no event of the turn says so
    clock.now += PIPED_FIRST - 1
    line.tick()
    assert err.getvalue() == ""  # the silence starts again at the announcement
    clock.now += 1
    line.tick()
    assert (
        err.getvalue()
        == f"neuron-turn: waiting for the worker to stop the turn ({PIPED_FIRST:.0f}s)\n"
    )
