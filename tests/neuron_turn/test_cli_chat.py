"""`neuron-turn chat` on a pseudo-terminal: history, streaming, commands, Ctrl-C and Ctrl-D."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_turn.cli._errors import EXIT_ERROR
from tests.terminal import CTRL_C, CTRL_D, Terminal

from .test_cli_state_file import spoil_history

PLUGINS = "fixture-plugin,state-sqlite,orch-local"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
    }


def say(terminal: Terminal, keys: bytes) -> None:
    """Type `keys` at the next prompt (keys typed before it may be flushed by readline)."""
    terminal.expect("> ")
    terminal.send(keys)


def chat(*argv: str) -> list[str]:
    return [sys.executable, "-m", "neuron_turn", "chat", *argv]


def neuron_turn(
    env: dict[str, str], *argv: str, input: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run `neuron-turn ARGV` with `input` piped in, to its end."""
    command = [sys.executable, "-m", "neuron_turn", *argv]
    return subprocess.run(command, input=input, env=env, capture_output=True, text=True, timeout=60)


def history(env: dict[str, str], session: str) -> list[tuple[str, str]]:
    done = neuron_turn(env, "history", session, "--json")
    assert done.returncode == 0, done.stderr
    return [(m["role"], _text(m["content"])) for m in json.loads(done.stdout)]


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(block.get("text", "") for block in content)


def test_a_chat_keeps_one_session_and_ctrl_d_leaves_cleanly(env: dict[str, str]) -> None:
    with Terminal(chat("--model", "fixture:echo", "--session", "c1"), env=env) as terminal:
        terminal.expect(
            r"neuron-turn chat with fixture:echo \(session c1 is new: it starts with no history"
        )
        say(terminal, b"hello there\r")
        terminal.expect("echo: hello there\n")
        say(terminal, b"and again\r")
        terminal.expect("echo: and again\n")
        say(terminal, CTRL_D)
        terminal.expect(r"session c1 \(continue with: neuron-turn chat --session c1\)")
        assert terminal.wait() == 0
        assert "Traceback" not in terminal.output
    assert history(env, "c1") == [
        ("user", "hello there"),
        ("assistant", "echo: hello there"),
        ("user", "and again"),
        ("assistant", "echo: and again"),
    ]
    # The next chat on the session says what it holds.
    with Terminal(chat("--model", "fixture:echo", "--session", "c1"), env=env) as terminal:
        terminal.expect(r"\(session c1, 4 messages so far\)")
        say(terminal, CTRL_D)
        assert terminal.wait() == 0


def test_commands_list_tools_add_up_cost_and_exit(env: dict[str, str]) -> None:
    argv = chat("--model", "fixture:tool", "--tool", "fixture_add")
    with Terminal(argv, env=env) as terminal:
        say(terminal, b"/tools\r")
        terminal.expect(r"  fixture_add: Add two integers\.\n")
        terminal.expect(r"  write_memory, delete_memory: this session's memory")
        say(terminal, b"add them\r")
        terminal.expect("the sum is 5\n")
        say(terminal, b"/cost\r")
        # Two model calls of the fixture: 10 + 12 tokens in, 5 + 3 out, $0.0006 each.
        terminal.expect(r"1 answer, 22 tokens in / 8 out, \$0\.0012\n")
        say(terminal, b"/nope\r")
        terminal.expect(r"unknown command /nope; /help lists them")
        say(terminal, b"/help\r")
        terminal.expect(r"/exit +leave")
        say(terminal, b"/exit\r")
        terminal.expect(r"session \w+ \(continue with: neuron-turn chat --session \w+\)")
        assert terminal.wait() == 0


def test_ctrl_c_cancels_the_answer_and_keeps_the_conversation(env: dict[str, str]) -> None:
    with Terminal(chat("--model", "fixture:stall", "--session", "g1"), env=env) as terminal:
        say(terminal, b"one\r")
        terminal.expect("echo: one\n")
        say(terminal, b"stall\r")
        terminal.expect("stalled ")  # streaming, then waiting for ever: now Ctrl-C
        terminal.send(CTRL_C)
        terminal.expect(r"\(answer cancelled; the conversation is as it was before it\)")
        say(terminal, b"three\r")
        terminal.expect("echo: three\n")
        say(terminal, CTRL_D)
        assert terminal.wait() == 0
        assert "Traceback" not in terminal.output
    assert history(env, "g1") == [
        ("user", "one"),
        ("assistant", "echo: one"),
        ("user", "three"),
        ("assistant", "echo: three"),
    ]


def test_ctrl_c_after_a_tool_ran_cancels_the_answer_and_keeps_what_the_tool_did(
    env: dict[str, str],
) -> None:
    argv = chat("--model", "fixture:tool-stall", "--tool", "fixture_add", "--session", "g3")
    with Terminal(argv, env=env) as terminal:
        say(terminal, b"add them\r")
        terminal.expect("stalled ")  # the tool ran, and the answer after it waits: Ctrl-C
        terminal.send(CTRL_C)
        terminal.expect(r"\(answer cancelled; the tools it ran did run: the conversation keeps")
        say(terminal, CTRL_D)
        assert terminal.wait() == 0
        assert "Traceback" not in terminal.output
    # The call and its result are in the session: the next answer knows the sum was made.
    assert history(env, "g3") == [("user", "add them"), ("assistant", ""), ("user", "")]


def test_a_chat_reads_piped_lines_without_a_prompt(env: dict[str, str]) -> None:
    done = neuron_turn(env, "chat", "--model", "fixture:echo", input="hi\n\n/cost\nbye\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hi\necho: bye\n"
    assert "\n1 answer, 12 tokens in / 3 out, $0.0006\n" in done.stderr  # /cost came before bye


def test_back_goes_on_in_a_new_session_from_an_earlier_message_keeping_the_old_one(
    env: dict[str, str],
) -> None:
    lines = "one\ntwo\nthree\n/back 1\nanother two\n"
    done = neuron_turn(env, "chat", "--model", "fixture:echo", "--session", "b1", input=lines)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: one\necho: two\necho: three\necho: another two\n"
    said = [line for line in done.stderr.splitlines() if "back after" in line]
    assert len(said) == 1 and said[0].startswith("neuron-turn: back after message 1 of 3: ")
    forked = said[0].split("goes on in session ")[1].split(";")[0]
    assert done.stderr.splitlines()[-1] == (
        f"session {forked} (continue with: neuron-turn chat --session {forked})"
    )
    assert history(env, forked) == [
        ("user", "one"),
        ("assistant", "echo: one"),
        ("user", "another two"),
        ("assistant", "echo: another two"),
    ]
    assert [text for role, text in history(env, "b1") if role == "user"] == ["one", "two", "three"]
    listed = neuron_turn(env, "sessions", "--json")
    titles = {entry["session"]: entry["title"] for entry in json.loads(listed.stdout)}
    assert titles[forked].startswith("forked from b1 at turn 1 of 3")


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("/back", "/back needs how many of your messages to keep: /back N"),
        ("/back two", "/back needs how many of your messages to keep: /back N"),
        ("/back 5", "cannot fork the first 5 turns of session 'b2': it has 1 turn; give 1"),
    ],
)
def test_back_that_cannot_go_back_says_why_and_the_chat_stays(
    env: dict[str, str], command: str, said: str
) -> None:
    lines = f"one\n{command}\nagain\n"
    done = neuron_turn(env, "chat", "--model", "fixture:echo", "--session", "b2", input=lines)

    assert done.returncode == 0, done.stderr
    assert said in done.stderr
    assert (
        done.stderr.splitlines()[-1] == "session b2 (continue with: neuron-turn chat --session b2)"
    )
    assert [text for role, text in history(env, "b2") if role == "user"] == ["one", "again"]


def test_a_piped_line_that_is_not_utf8_is_refused_and_the_chat_goes_on(
    env: dict[str, str],
) -> None:
    command = [sys.executable, "-m", "neuron_turn", "chat", "--model", "fixture:echo"]
    done = subprocess.run(
        command, input=b"hi \xff\nbye\n", env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"echo: bye\n"
    assert b"that line is not UTF-8 text (byte 3); nothing was sent" in done.stderr


def test_an_unknown_model_fails_before_the_chat_starts(env: dict[str, str]) -> None:
    done = neuron_turn(env, "chat", "--model", "nope:x", input="")
    assert done.returncode == 4
    assert done.stderr.startswith("neuron-turn: error: unknown provider 'nope'")


APPROVE = ("--model", "fixture:tool", "--tool", "fixture_add", "--approve-tool", "fixture_*")


def test_a_call_waiting_for_approval_is_asked_on_the_terminal_and_the_answer_goes_on(
    env: dict[str, str],
) -> None:
    with Terminal(chat(*APPROVE, "--session", "a1"), env=env) as terminal:
        say(terminal, b"add them\r")
        terminal.expect(r'call_1: fixture_add \{"a": 2, "b": 3\}\n')
        terminal.expect(r"run it\? \[y\]es / \[n\]o / \[e\]dit / \[a\]lways / ne\[v\]er: ")
        terminal.send(b"y\r")
        terminal.expect("the sum is 5\n")
        say(terminal, b"/cost\r")
        # The paused part and the resumed part are one answer.
        terminal.expect(r"1 answer, 22 tokens in / 8 out, \$0\.0012\n")
        say(terminal, CTRL_D)
        assert terminal.wait() == 0
        assert "Traceback" not in terminal.output


def test_piped_answers_decide_the_waiting_call_and_a_denial_reaches_the_model(
    env: dict[str, str],
) -> None:
    done = neuron_turn(env, "chat", *APPROVE, "--session", "a2", input="add them\nn\nnot today\n")
    assert done.returncode == 0, done.stderr
    assert "1 tool call(s) wait for your approval" in done.stderr
    assert "why not? (the model reads this): " in done.stderr
    stored = neuron_turn(env, "history", "a2", "--json").stdout
    assert "Denied by a person: not today" in stored


def test_input_ending_at_the_question_leaves_the_call_waiting_and_says_how_to_resume(
    env: dict[str, str],
) -> None:
    done = neuron_turn(env, "chat", *APPROVE, "--session", "a3", input="add them\n")
    assert done.returncode == 15, done.stderr
    assert "waiting for approval of 1 tool call(s) in session a3" in done.stderr
    hint = next(line for line in done.stderr.splitlines() if line.startswith("  approve: "))
    command = hint.removeprefix("  approve: ").split()
    assert command[:5] == ["neuron-turn", "resume", "a3", "--approve", "call_1"]
    assert "--approve-tool" in command and "--tool" in command
    resumed = neuron_turn(env, *command[1:])
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "the sum is 5\n"


def test_allow_tool_limits_what_the_chat_offers_and_lists(env: dict[str, str]) -> None:
    echo_add = ("chat", "--model", "fixture:echo", "--tool", "fixture_add")
    done = neuron_turn(env, *echo_add, "--allow-tool", "fixture_add", input="/tools\n")
    assert done.returncode == 0, done.stderr
    assert "  fixture_add: Add two integers." in done.stderr
    assert "write_memory" not in done.stderr
    refused = neuron_turn(env, *echo_add, "--allow-tool", "other")
    assert refused.returncode == 2
    assert "--tool fixture_add is offered but not allowed" in refused.stderr


def test_a_chat_on_a_session_left_waiting_asks_about_its_calls_first(
    env: dict[str, str],
) -> None:
    left = neuron_turn(env, "chat", *APPROVE, "--session", "a5", input="add them\n")
    assert left.returncode == 15, left.stderr
    # Input ends again before a decision: still waiting, and said so.
    again = neuron_turn(env, "chat", *APPROVE, "--session", "a5")
    assert again.returncode == 15, again.stderr
    assert "session a5 was left waiting for approval" in again.stderr
    assert "neuron-turn resume a5 --approve call_1" in again.stderr
    # Decided: the earlier turn goes on, then the chat takes new messages.
    done = neuron_turn(env, "chat", *APPROVE, "--session", "a5", input="y\n/cost\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the sum is 5\n"
    assert 'call_1: fixture_add {"a": 2, "b": 3}' in done.stderr
    # The piped answer, echoed.
    assert "run it? [y]es / [n]o / [e]dit / [a]lways / ne[v]er: y\n" in done.stderr
    assert "\n1 answer, 12 tokens in / 3 out, $0.0006\n" in done.stderr
    assert history(env, "a5")[-1] == ("assistant", "the sum is 5")


def test_a_chat_on_a_session_whose_history_does_not_parse_fails_in_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    spoil_history(tmp_path / "state.db", "e")
    done = neuron_turn(env, "chat", "--model", "fixture:echo", "--session", "e", input="hi\n")

    assert done.returncode == EXIT_ERROR
    assert "(session e, 1 message so far)" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        "neuron-turn: error: the turn failed: ContextAssemblyError: the stored history of "
        "session 'e' (key 'messages') does not parse, at 0.role: Input should be 'user' or "
        "'assistant'; refusing to run without the conversation so far"
    )


def test_attach_sends_a_file_with_the_next_message_only(
    env: dict[str, str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("ship on Friday", encoding="utf-8")
    lines = f"/attach {tmp_path / 'missing.pdf'}\n/attach {notes}\nsum up\nagain\n"
    done = neuron_turn(env, "chat", "--model", "fixture:echo", "--session", "d1", input=lines)
    assert done.returncode == 0, done.stderr
    assert "cannot read --attach" in done.stderr and "nothing was attached" in done.stderr
    assert f"attached {notes}; it goes with your next message" in done.stderr
    shown = neuron_turn(env, "history", "d1")
    assert shown.stdout.splitlines()[0] == "user (turn 1): sum up [document notes.txt]"
    assert shown.stdout.splitlines()[2] == "user (turn 2): again"


TOOL = ("--model", "fixture:tool", "--tool", "fixture_add")


def test_usage_limits_bound_each_answer_and_the_note_names_the_flag(env: dict[str, str]) -> None:
    done = neuron_turn(env, "chat", *TOOL, "--max-tool-calls", "0", input="add them\n")
    assert done.returncode == 0, done.stderr
    assert "Stopped at the turn's limit of 0 tool calls" in done.stderr
    assert "(--max-tool-calls); raise --max-tool-calls, or type the next message" in done.stderr
    assert "the sum is 5" not in done.stdout  # the call never ran


def test_a_stop_tool_ends_each_answer_with_its_result(env: dict[str, str]) -> None:
    done = neuron_turn(env, "chat", *TOOL, "--stop-at-tool", "fixture_add", input="add them\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5\n"  # the tool's result, no model call after it


def test_an_unknown_stop_tool_is_a_usage_error_before_the_chat_starts(
    env: dict[str, str],
) -> None:
    done = neuron_turn(env, "chat", *TOOL, "--stop-at-tool", "nope", input="add them\n")
    assert done.returncode == 2
    assert "names stop tools this turn does not have: nope; its tools: fixture_add" in done.stderr
    assert "neuron-turn chat with" not in done.stderr  # said before, not at each answer


def test_max_cost_bounds_each_answer_and_the_note_names_the_flag(env: dict[str, str]) -> None:
    done = neuron_turn(env, "chat", *TOOL, "--max-cost", "0.0001", input="add them\n")
    assert done.returncode == 0, done.stderr
    assert "stopped at its cost limit (--max-cost; $0.0006 spent); raise --max-cost" in done.stderr


def test_an_answers_images_are_named_with_where_the_session_keeps_them(
    env: dict[str, str],
) -> None:
    argv = chat(
        "--model", "fixture:painter", "--hosted-tool", "image_generation", "--session", "p1"
    )
    with Terminal(argv, env=env) as terminal:
        say(terminal, b"draw a cat\r")
        terminal.expect("Here is a cat.")
        terminal.expect(r"the answer holds 2 images; neuron-turn history p1 --json holds them")
        say(terminal, CTRL_D)
        assert terminal.wait() == 0
    done = neuron_turn(env, "history", "p1", "--json")
    assert [b["type"] for b in json.loads(done.stdout)[-1]["content"]] == ["text", "image", "image"]


def test_chat_writes_each_answers_images_where_save_images_says(
    env: dict[str, str], tmp_path: Path
) -> None:
    images = tmp_path / "images"
    argv = chat(
        "--model", "fixture:painter", "--hosted-tool", "image_generation",
        "--save-images", str(images),
    )  # fmt: skip
    with Terminal(argv, env=env) as terminal:
        say(terminal, b"draw a cat\r")
        terminal.expect("Here is a cat.")
        terminal.expect(r"image 1: \S+\.png")
        terminal.expect("image 2: https://images.example.com/cat.webp")
        say(terminal, CTRL_D)
        assert terminal.wait() == 0
    (written,) = images.iterdir()
    assert written.read_bytes().startswith(b"\x89PNG")
