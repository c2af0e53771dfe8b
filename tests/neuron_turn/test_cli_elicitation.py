"""An MCP server's questions mid tool call, on the command line: asked at the terminal.

`run` and `chat` on a (pseudo-)terminal put the `elicits` test server's
question to the person, field by field; piped, they give no handler and the
server is told so.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.neuron_tool.mcp_servers.paths import script
from tests.terminal import Terminal

PLUGINS = "fixture-plugin,state-sqlite,orch-local"
SERVER = " ".join(shlex.quote(part) for part in script("elicits"))
BOOK = ["--model", "fixture:first-tool", "--mcp", SERVER]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
    }


def command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "neuron_turn", *argv]


def the_tool_said(output: str) -> object:
    """What the `elicits` server's tool reported, from the fixture model's answer."""
    _, _, said = output.partition("the tool said: ")
    return json.loads(said.splitlines()[0])


def test_run_on_a_terminal_asks_the_servers_question_field_by_field(env: dict[str, str]) -> None:
    with Terminal(command("run", "book it", *BOOK), env=env) as terminal:
        terminal.expect(r"MCP server 'elicits.py' asks: Book 2 seats on the 14th\?")
        terminal.expect(r"answer it\? \[y\]es, \[n\]o, \[c\]ancel: ")
        terminal.send(b"y\n")
        terminal.expect(r"confirm \(Book them\?\) \[y/n\]: ")
        terminal.send(b"maybe\n")
        terminal.expect("answer y or n")
        terminal.send(b"y\n")
        terminal.expect(r"seats optional: ")
        terminal.send(b"80\n")  # the schema's maximum is 8: asked again, whole
        terminal.expect(r"\$\.seats: 80 is greater than the maximum of 8; answer again")
        terminal.expect(r"confirm \(Book them\?\) \[y/n\]: ")
        terminal.send(b"y\n")
        terminal.expect(r"seats optional: ")
        terminal.send(b"2\n")
        assert terminal.wait() == 0
        output = terminal.output

    assert the_tool_said(output) == {"action": "accept", "content": {"confirm": True, "seats": 2}}


def test_chat_on_a_terminal_asks_and_no_declines(env: dict[str, str]) -> None:
    with Terminal(command("chat", *BOOK), env=env) as terminal:
        terminal.expect("> ")
        terminal.send(b"book it\n")
        terminal.expect(r"answer it\? \[y\]es, \[n\]o, \[c\]ancel: ")
        terminal.send(b"n\n")
        terminal.expect("the tool said: ")
        terminal.expect("> ")
        terminal.send(b"/exit\n")
        assert terminal.wait() == 0
        output = terminal.output

    assert the_tool_said(output) == {"action": "decline", "content": None}


def test_a_piped_run_gives_no_handler_and_the_model_reads_why(env: dict[str, str]) -> None:
    done = subprocess.run(
        command("run", "book it", *BOOK),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    assert "asked a question during the call to tool 'book'" in done.stdout
    assert "it has no elicitation handler" in done.stdout
