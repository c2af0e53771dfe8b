"""`--approve-tool`, the `y/n/edit` prompt on a terminal, and `neuron-turn resume`.

Every test runs the real `neuron-turn` in a child process against the fixture
plugin's scripted provider and a real SQLite file: through a pseudo-terminal
for the prompt, through pipes for the exit code and the printed `resume`
command, which then runs in a new process.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from layer0 import TurnOutput
from neuron_turn import pending_approvals
from neuron_turn.cli._errors import (
    EXIT_AWAITING_APPROVAL,
    EXIT_DECISIONS,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
)

SCRIPT = str(Path(sys.executable).with_name("neuron-turn"))
PLUGINS = "fixture-plugin,state-sqlite,orch-local"
TOOL = ["--model", "fixture:tool", "--tool", "fixture_add"]
PROMPT = "run it? [y]es / [n]o / [e]dit / [a]lways / ne[v]er: "
WAIT = 60.0  # seconds a child may take to print what a test waits for


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_")}
    environ.pop("EDITOR", None)
    return environ | {
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
    }


def neuron_turn(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT,
    )


class Terminal:
    """`neuron-turn` with stdin and stderr on a pseudo-terminal, stdout on a pipe."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        master, slave = os.openpty()
        self.process = subprocess.Popen(
            [SCRIPT, *args], stdin=slave, stdout=subprocess.PIPE, stderr=slave, env=env
        )
        os.close(slave)
        self.master = master
        self.seen = b""

    def expect(self, text: str) -> str:
        """Read the terminal until `text`; return what came before it."""
        wanted = text.encode()
        deadline = time.monotonic() + WAIT
        while wanted not in self.seen:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.master], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"no {text!r} on the terminal; it shows {self.seen!r}")
            chunk = self._read()
            if not chunk:
                raise AssertionError(f"the terminal closed before {text!r}: {self.seen!r}")
            self.seen += chunk
        before, _, self.seen = self.seen.partition(wanted)
        return before.decode().replace("\r\n", "\n")

    def answer(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def end(self) -> tuple[int, str, str]:
        """Wait for the exit; return the code, stdout and the rest of the terminal."""
        out = self.process.communicate(timeout=WAIT)[0].decode()
        rest = self.seen
        while select.select([self.master], [], [], 0)[0]:
            chunk = self._read()
            if not chunk:
                break
            rest += chunk
        os.close(self.master)
        return self.process.returncode, out, rest.decode().replace("\r\n", "\n")

    def _read(self) -> bytes:
        try:
            return os.read(self.master, 4096)
        except OSError:  # EIO: the child closed its side
            return b""


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        if terminal.process.poll() is None:
            terminal.process.kill()
            terminal.process.wait()


def open_terminal(terminals: list[Terminal], env: dict[str, str], *args: str) -> Terminal:
    terminal = Terminal(env, *args)
    terminals.append(terminal)
    return terminal


def history(env: dict[str, str], session: str) -> str:
    """The session's stored history, as a new process reads it from the SQLite file."""
    done = neuron_turn(env, "history", session, "--json")
    assert done.returncode == 0, done.stderr
    return done.stdout


# --- with a terminal -----------------------------------------------------------------


def test_yes_on_the_terminal_runs_the_call_and_finishes_the_turn(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    terminal = open_terminal(terminals, env, "run", "add", *TOOL, "--approve-tool", "fixture_*")
    shown = terminal.expect(PROMPT)
    assert "1 tool call(s) wait for your approval" in shown
    assert 'call_1: fixture_add {"a": 2, "b": 3}' in shown
    terminal.answer("y")
    code, out, rest = terminal.end()
    assert (code, out) == (0, "the sum is 5\n")
    assert "[tool] fixture_add -> 5" in rest  # stderr is a terminal: progress is shown
    # The summary covers both parts: the call that paused and the one after the approval.
    assert "complete, 2 turns, 22 tokens in / 8 out, $0.0012" in rest


def test_the_runs_own_options_hold_after_yes_on_the_terminal(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    # The stop tool is the run's option, not the turn's config: the pause keeps it.
    options = ["--approve-tool", "fixture_add", "--stop-at-tool", "fixture_add"]
    terminal = open_terminal(terminals, env, "run", "add", *TOOL, *options)
    terminal.expect(PROMPT)
    terminal.answer("y")
    code, out, rest = terminal.end()
    assert (code, out) == (0, "5\n"), rest  # the tool's result; no model call after it
    assert "complete, 1 turn," in rest


def test_no_on_the_terminal_asks_why_and_the_model_reads_it(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    terminal = open_terminal(terminals, env, "run", "add", *TOOL, "--approve-tool", "fixture_add")
    terminal.expect(PROMPT)
    terminal.answer("n")
    terminal.expect("why not? (the model reads this): ")
    terminal.answer("not on a Sunday")
    code, out, rest = terminal.end()
    assert (code, out) == (0, "the sum is Denied by a person: not on a Sunday\n")
    assert "fixture_add -> " not in rest  # the tool never ran


# Asks for the calculator whenever the last message has no tool result, so a later turn
# in a session asks again.
CALCULATOR = ["--model", "fixture:calculator", "--tool", "calculator"]


def with_calculator(env: dict[str, str]) -> dict[str, str]:
    return {**env, "NEURON_LOAD_PLUGINS": f"{PLUGINS},tools-basic"}


def test_never_on_the_terminal_denies_the_tools_later_calls_in_the_session_unasked(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    env = with_calculator(env)
    held = ["run", "multiply", *CALCULATOR, "--approve-tool", "calculator", "--session", "s-v"]
    terminal = open_terminal(terminals, env, *held)
    terminal.expect(PROMPT)
    terminal.answer("v")
    terminal.expect("why not? (the model reads this): ")
    terminal.answer("no sums today")
    code, out, _ = terminal.end()
    assert (code, out) == (0, "17 multiplied by 23 equals Denied by a person: no sums today.\n")
    # The next run in the session is not asked: its call is denied at once.
    again = neuron_turn(env, *held)
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        "17 multiplied by 23 equals Denied by a person for every call of 'calculator' in "
        "this session: no sums today.\n"
    )


def test_edit_without_an_editor_reads_one_json_line(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    terminal = open_terminal(terminals, env, "run", "add", *TOOL, "--approve-tool", "fixture_add")
    terminal.expect(PROMPT)
    terminal.answer("maybe")
    terminal.expect("answer y, n, e, or a / v")
    terminal.expect(PROMPT)
    terminal.answer("edit")
    terminal.expect("input as JSON on one line: ")
    terminal.answer("{not json")
    terminal.expect("not JSON")
    terminal.expect(PROMPT)
    terminal.answer("e")
    terminal.expect("input as JSON on one line: ")
    terminal.answer('{"a": 40, "b": 2}')
    code, out, _ = terminal.end()
    assert (code, out) == (0, "the sum is 42\n")


def test_edit_opens_the_editor_and_an_input_the_tool_refuses_is_asked_again(
    env: dict[str, str], terminals: list[Terminal], tmp_path: Path
) -> None:
    # The "editor" replaces the file with the next input of a list: first one the
    # tool's schema refuses, then a good one.
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps([{"a": "seven", "b": 8}, {"a": 7, "b": 8}]))
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import json, pathlib, sys\n"
        f"queue = pathlib.Path({str(inputs)!r})\n"
        "items = json.loads(queue.read_text())\n"
        "seen = json.loads(pathlib.Path(sys.argv[1]).read_text())\n"
        "assert seen == {'a': 2, 'b': 3}, seen\n"
        "pathlib.Path(sys.argv[1]).write_text(json.dumps(items.pop(0)))\n"
        "queue.write_text(json.dumps(items))\n"
    )
    env = env | {"EDITOR": f"{shlex.quote(sys.executable)} {shlex.quote(str(editor))}"}
    terminal = open_terminal(terminals, env, "run", "add", *TOOL, "--approve-tool", "fixture_add")
    terminal.expect(PROMPT)
    terminal.answer("edit")
    shown = terminal.expect(PROMPT)
    assert "error: the edited input of call 'call_1' (fixture_add) does not match" in shown
    assert "decide again" in shown
    terminal.answer("edit")
    code, out, _ = terminal.end()
    assert (code, out) == (0, "the sum is 15\n")
    assert json.loads(inputs.read_text()) == []


def test_a_turn_that_pauses_twice_is_asked_twice(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    args = ["--model", "fixture:tool-twice", "--tool", "fixture_add", "--approve-tool", "*"]
    terminal = open_terminal(terminals, env, "run", "add twice", *args)
    assert 'call_1: fixture_add {"a": 2, "b": 3}' in terminal.expect(PROMPT)
    terminal.answer("y")
    assert 'call_2: fixture_add {"a": 5, "b": 100}' in terminal.expect(PROMPT)
    terminal.answer("yes")
    code, out, _ = terminal.end()
    assert (code, out) == (0, "the sums are 5 and 105\n")


def test_end_of_input_at_the_prompt_leaves_the_turn_paused_and_says_how_to_resume(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    terminal = open_terminal(
        terminals, env, "run", "add", *TOOL, "--approve-tool", "fixture_add", "--session", "s1"
    )
    terminal.expect(PROMPT)
    os.write(terminal.master, b"\x04")  # Ctrl-D: end of input
    code, _, rest = terminal.end()
    assert code == EXIT_AWAITING_APPROVAL
    assert "neuron-turn resume s1 --approve call_1" in rest
    done = neuron_turn(env, "resume", "s1", "--approve", "call_1", *TOOL)
    assert (done.returncode, done.stdout) == (0, "the sum is 5\n")


def test_ctrl_c_at_the_prompt_ends_at_once_and_the_turn_stays_paused(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    terminal = open_terminal(
        terminals, env, "run", "add", *TOOL, "--approve-tool", "fixture_add", "--session", "s1"
    )
    terminal.expect(PROMPT)
    terminal.process.send_signal(signal.SIGINT)  # no Enter follows: nothing may wait for one
    code, _, rest = terminal.end()
    assert code == EXIT_INTERRUPTED
    assert "neuron-turn: error: interrupted" in rest
    done = neuron_turn(env, "resume", "s1", "--deny", "call_1", *TOOL)
    assert (done.returncode, done.stdout) == (0, "the sum is Denied by a person: no reason given\n")


# --- without a terminal -------------------------------------------------------------


def hint_command(stderr: str, label: str) -> list[str]:
    (line,) = [line for line in stderr.splitlines() if line.startswith(f"  {label}:")]
    words = shlex.split(line.split(":", 1)[1])
    assert words[0] == "neuron-turn"
    return words[1:]


def test_without_a_terminal_run_exits_with_its_code_and_the_printed_command_resumes(
    env: dict[str, str],
) -> None:
    paused = neuron_turn(env, "run", "add", *TOOL, "--approve-tool", "fixture_add")
    assert paused.returncode == EXIT_AWAITING_APPROVAL, paused.stderr
    assert paused.stdout.strip() == ""
    lines = paused.stderr.splitlines()
    assert lines[0].startswith("custom (awaiting_approval), 1 turn, 10 tokens in / 5 out")
    session = lines[1].rsplit(" ", 1)[1].rstrip(":")
    assert lines[1:4] == [
        f"neuron-turn: the turn is waiting for approval of 1 tool call(s) in session {session}:",
        '  call_1  fixture_add  {"a": 2, "b": 3}',
        "continue it with one decision per call:",
    ]
    options = ["--model", "fixture:tool", "--tool", "fixture_add", "--approve-tool", "fixture_add"]
    approve = hint_command(paused.stderr, "approve")
    assert approve == ["resume", session, "--approve", "call_1", *options]
    assert hint_command(paused.stderr, "deny") == [
        "resume",
        session,
        *("--deny", "call_1", "--reason", "..."),
        *options,
    ]
    assert '--approve call_1 --input \'{"a": 2, "b": 3}\'' in paused.stderr
    assert "(decide a tool's later calls in this session too: --always" in paused.stderr
    stored = history(env, session)
    assert "call_1" in stored and "tool_result" not in stored  # the call waits, unrun

    # A new process, reading the pause from the SQLite file.
    done = neuron_turn(env, *approve)
    assert (done.returncode, done.stdout) == (0, "the sum is 5\n"), done.stderr
    assert done.stderr.splitlines()[-1] == f"session {session} (continue with --session {session})"
    again = neuron_turn(env, "run", "and now?", "--session", session, "--model", "fixture:echo")
    assert (again.returncode, again.stdout) == (0, "echo: and now?\n")


def test_a_typed_runs_resume_hint_names_its_schema_mode_and_strictness_to_give_again(
    env: dict[str, str], tmp_path: Path
) -> None:
    schema = tmp_path / "sum.json"
    schema.write_text('{"type": "object"}', encoding="utf-8")
    typed = ["--output-schema", str(schema), "--output-mode", "prompted", "--strict-output", "off"]
    typed.append("--output-text")
    paused = neuron_turn(env, "run", "add", *TOOL, "--approve-tool", "fixture_add", *typed)

    assert paused.returncode == EXIT_AWAITING_APPROVAL, paused.stderr
    assert (
        "  (add the --output-schema FILE --output-mode prompted --strict-output off "
        "--output-text this run had)" in paused.stderr.splitlines()
    )
    approve = hint_command(paused.stderr, "approve")
    assert all(
        flag not in approve for flag in ("--output-mode", "--strict-output", "--output-text")
    )


def test_a_named_typed_runs_resume_command_carries_its_output_type_and_answers_typed(
    env: dict[str, str],
) -> None:
    typed = ["--output-type", "fixture_sum", "--output-text"]
    paused = neuron_turn(env, "run", "add", *TOOL, "--approve-tool", "fixture_add", *typed)
    assert paused.returncode == EXIT_AWAITING_APPROVAL, paused.stderr
    approve = hint_command(paused.stderr, "approve")
    assert approve[-3:] == typed

    done = neuron_turn(env, *approve)

    assert (done.returncode, done.stdout) == (0, '{"kind": "text", "data": "the sum is 5"}\n')


def test_resume_denies_with_a_reason_and_edits_an_input(env: dict[str, str]) -> None:
    for session, decision, answer in [
        ("s-deny", ["--deny", "call_1", "--reason", "ask me tomorrow"], "Denied by a person"),
        ("s-edit", ["--approve", "call_1", "--input", '{"a": 40, "b": 2}'], "42"),
    ]:
        paused = neuron_turn(env, "run", "add", *TOOL, "--approve-tool", "*", "--session", session)
        assert paused.returncode == EXIT_AWAITING_APPROVAL
        done = neuron_turn(env, "resume", session, *decision, *TOOL)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"the sum is {answer}")
    assert "ask me tomorrow" in history(env, "s-deny")


def test_resume_always_lets_the_tools_later_calls_in_the_session_run_without_asking(
    env: dict[str, str],
) -> None:
    env = with_calculator(env)
    held = [*CALCULATOR, "--approve-tool", "calculator", "--session", "s-always"]
    paused = neuron_turn(env, "run", "multiply", *held)
    assert paused.returncode == EXIT_AWAITING_APPROVAL
    done = neuron_turn(env, "resume", "s-always", "--approve", "call_1", "--always", *held[:-2])
    assert (done.returncode, done.stdout) == (0, "17 multiplied by 23 equals 391.\n"), done.stderr
    # The next run's call runs without asking.
    again = neuron_turn(env, "run", "multiply again", *held)
    assert (again.returncode, again.stdout) == (0, "17 multiplied by 23 equals 391.\n")
    assert '"call_1_1"' in history(env, "s-always")  # it called the tool again
    misplaced = neuron_turn(env, "resume", "s-always", "--always", "--approve", "call_1")
    assert misplaced.returncode == EXIT_USAGE
    assert "--always belongs after the --approve ID or --deny ID it extends" in misplaced.stderr


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ([], "session 's1' has pending call(s) without a decision: call_1"),
        (["--approve", "call_1", "--deny", "call_9"], "call 'call_9' is not pending"),
        (["--approve", "call_1", "--approve", "call_1"], "call 'call_1' is decided more than once"),
        (
            ["--approve", "call_1", "--input", '{"a": [[[1]]], "b": 1}'],
            "the edited input of call 'call_1' (fixture_add) does not match the tool's schema",
        ),
    ],
    ids=["missing", "unknown", "duplicate", "bad-edit"],
)
def test_bad_decisions_exit_with_their_own_code_and_run_nothing(
    env: dict[str, str], decisions: list[str], message: str
) -> None:
    paused = neuron_turn(env, "run", "add", *TOOL, "--approve-tool", "*", "--session", "s1")
    assert paused.returncode == EXIT_AWAITING_APPROVAL
    before = history(env, "s1")
    refused = neuron_turn(env, "resume", "s1", *decisions, *TOOL)
    assert refused.returncode == EXIT_DECISIONS, refused.stderr
    (line,) = refused.stderr.splitlines()
    assert line.startswith("neuron-turn: error: ") and message in line, line
    assert history(env, "s1") == before
    done = neuron_turn(env, "resume", "s1", "--approve", "call_1", *TOOL)
    assert (done.returncode, done.stdout) == (0, "the sum is 5\n")


def test_a_new_message_on_a_paused_session_and_a_resume_of_one_not_paused_are_refused(
    env: dict[str, str],
) -> None:
    neuron_turn(env, "run", "add", *TOOL, "--approve-tool", "*", "--session", "s1")
    refused = neuron_turn(env, "run", "hello?", "--session", "s1", *TOOL)
    assert refused.returncode == EXIT_DECISIONS
    assert "awaiting approval of call(s) call_1" in refused.stderr
    assert "neuron-turn resume SESSION --approve ID" in refused.stderr
    fresh = neuron_turn(env, "resume", "nothing-here", "--approve", "call_1", *TOOL)
    assert fresh.returncode == EXIT_DECISIONS
    assert "session 'nothing-here' is not awaiting approval" in fresh.stderr


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        (["--input", "{}"], "--input belongs right after the --approve ID"),
        (["--deny", "c", "--input", "{}"], "--input belongs right after the --approve ID"),
        (["--approve", "c", "--reason", "x"], "--reason belongs right after the --deny ID"),
        (["--approve", "c", "--input", "{nope"], "not JSON"),
        (["--approve", "c", "--failed"], "--failed belongs right after the --answer ID JSON"),
        (["--answer", "c", "blue"], "--answer c: the result is not JSON"),
        (["--answer", "c", '"blue"', "--always"], "--always belongs after the --approve ID"),
    ],
)
def test_misplaced_decision_options_are_usage_errors(
    env: dict[str, str], decisions: list[str], message: str
) -> None:
    refused = neuron_turn(env, "resume", "s1", *decisions, *TOOL)
    assert refused.returncode == EXIT_USAGE
    assert message in refused.stderr


def test_json_output_carries_the_pending_calls(env: dict[str, str]) -> None:
    paused = neuron_turn(env, "run", "add", *TOOL, "--approve-tool", "*", "--json")
    assert paused.returncode == EXIT_AWAITING_APPROVAL
    output = TurnOutput.model_validate_json(paused.stdout)
    raw = json.loads(paused.stdout)
    assert raw["exit_reason"] == {"custom": "awaiting_approval"}
    (log,) = [e for e in raw["effects"] if e["type"] == "log"]
    assert log["data"] == {
        "awaiting_approval": [{"id": "call_1", "name": "fixture_add", "input": {"a": 2, "b": 3}}]
    }
    assert [(p.id, p.name) for p in pending_approvals(output)] == [("call_1", "fixture_add")]
    assert "neuron-turn resume" in paused.stderr
    session = paused.stderr.split(" in session ", 1)[1].split(":", 1)[0]
    done = neuron_turn(env, "resume", session, "--approve", "call_1", *TOOL, "--json")
    assert done.returncode == 0
    assert TurnOutput.model_validate_json(done.stdout).message.as_text() == "the sum is 5"


def test_a_plugin_policy_over_the_input_holds_the_call_without_any_flag(
    env: dict[str, str],
) -> None:
    # The fixture plugin's entry point registers: fixture_add waits when a number is >= 1000.
    paused = neuron_turn(env, "run", "add", "--model", "fixture:big-sum", "--tool", "fixture_add")
    assert paused.returncode == EXIT_AWAITING_APPROVAL, paused.stderr
    assert '  call_1  fixture_add  {"a": 1000, "b": 1}' in paused.stderr
    small = neuron_turn(env, "run", "add", *TOOL)
    assert (small.returncode, small.stdout) == (0, "the sum is 5\n")
    done = neuron_turn(env, *hint_command(paused.stderr, "approve"))
    assert (done.returncode, done.stdout) == (0, "the sum is 1001\n")


# --- external tools: the person carries the call out ----------------------------------

ASKS = ["--model", "fixture:first-tool", "--tool", "fixture_ask_user"]
ANSWER_PROMPT = "its result? [t]ext / [j]son / [n]o, refuse it: "


def test_an_external_call_on_the_terminal_is_answered_by_the_person(
    env: dict[str, str], terminals: list[Terminal]
) -> None:
    terminal = open_terminal(terminals, env, "run", "ask me", *ASKS)
    shown = terminal.expect(ANSWER_PROMPT)
    assert "call_1: fixture_ask_user {}  (an external tool: yours to do)" in shown
    terminal.answer("j")
    terminal.expect("its result as JSON on one line: ")
    terminal.answer("{nope")
    terminal.expect(ANSWER_PROMPT)  # not JSON: asked again
    terminal.answer("t")
    terminal.expect("its result (the model reads this line): ")
    terminal.answer("blue")
    code, out, rest = terminal.end()
    assert (code, out) == (0, "the tool said: blue\n"), rest


def test_without_a_terminal_an_external_call_prints_the_answer_command_which_resumes(
    env: dict[str, str],
) -> None:
    paused = neuron_turn(env, "run", "ask me", *ASKS, "--session", "s-ask")
    assert paused.returncode == EXIT_AWAITING_APPROVAL, paused.stderr
    assert (
        "neuron-turn: the turn is waiting for the result of 1 tool call(s) in session s-ask:"
        in paused.stderr
    )
    assert "  call_1  fixture_ask_user  {}  (an external tool: you carry it out)" in paused.stderr
    answer = hint_command(paused.stderr, "answer")
    assert answer == ["resume", "s-ask", "--answer", "call_1", "JSON", *ASKS]
    assert "--answer ID JSON gives the model its result" in paused.stderr
    assert "--approve" not in paused.stderr  # nothing here can run it

    answer[answer.index("JSON")] = '{"colour": "blue"}'
    done = neuron_turn(env, *answer, "--failed")
    assert (done.returncode, done.stdout) == (0, 'the tool said: {"colour":"blue"}\n'), done.stderr
    assert re.search(r'"is_error":\s*true', history(env, "s-ask"))


def test_approving_an_external_call_exits_with_the_decisions_code_and_keeps_it_waiting(
    env: dict[str, str],
) -> None:
    neuron_turn(env, "run", "ask me", *ASKS, "--session", "s-ask")
    refused = neuron_turn(env, "resume", "s-ask", "--approve", "call_1", *ASKS)
    assert refused.returncode == EXIT_DECISIONS
    assert "call 'call_1' is of external tool 'fixture_ask_user'" in refused.stderr
    done = neuron_turn(env, "resume", "s-ask", "--answer", "call_1", '"red"', *ASKS)
    assert (done.returncode, done.stdout) == (0, "the tool said: red\n"), done.stderr
