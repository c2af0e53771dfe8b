"""Untrusted text the command line shows on a terminal is inert there, JSON included.

A model's answer, a delegated task (a turn's title), a session id a served
agent's client chose, an MCP server's tool descriptions, an image URL a model
gave: each may hold escape sequences (OSC 52 writes the clipboard, OSC 0 the
window title, the 8-bit CSI moves the cursor). On a terminal none may arrive
as it was written; piped, JSON stays byte for byte what was made.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from layer0 import HookPoint, UrlSource, usd
from neuron_tool import tool
from neuron_turn import (
    ImagePart,
    ProviderResponse,
    RegisterProvider,
    RegisterTool,
    TextPart,
    TokenUsage,
    hookimpl,
)
from neuron_turn.cli import main
from neuron_turn.cli._stream_output import JsonLinesPrinter
from neuron_turn.cli._visible import json_escaped
from neuron_turn.cli.progress import ProgressHook
from neuron_turn.loop.events import TextDelta
from neuron_turn.plugins import get_plugin_manager
from neuron_turn.testing import ScriptedProvider
from tests.terminal import Terminal

from .cli_process import fixture_env, neuron_turn
from .test_cli_progress import context

pytestmark = pytest.mark.usefixtures("fixture_plugins")

# Write the clipboard, set the window title, an 8-bit CSI, DEL.
HOSTILE = "ok \x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;pwned\x07 \x9b2J \x7f end"
ACTED_ON = ("\x1b]", "\x07", "\x9b")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _inert(raw: str) -> bool:
    return not any(sequence in raw for sequence in ACTED_ON)


def test_show_lists_a_hostile_title_and_session_inert_on_a_terminal(tmp_path: Path) -> None:
    env = fixture_env(tmp_path)
    ran = neuron_turn(env, "run", "--model", "fixture:echo", "--session", "s" + HOSTILE, HOSTILE)
    assert ran.returncode == 0, ran.stderr
    with Terminal([sys.executable, "-m", "neuron_turn", "show"], env=env) as terminal:
        assert terminal.wait() == 0
        raw = terminal.raw
    assert "complete" in raw
    assert _inert(raw), raw
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in raw


def test_run_json_on_a_terminal_is_inert_and_the_same_json(tmp_path: Path) -> None:
    env = fixture_env(tmp_path)
    command = [sys.executable, "-m", "neuron_turn", "run", "--json", "--model", "fixture:echo"]
    with Terminal([*command, HOSTILE], env=env) as terminal:
        assert terminal.wait() == 0
        raw = terminal.raw
    assert _inert(raw), raw
    line = next(line for line in raw.splitlines() if line.startswith("{"))
    assert json.loads(line)["message"] == "echo: " + HOSTILE

    piped = subprocess.run(
        [*command, HOSTILE], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert "\x9b" in piped.stdout  # for a program, as the JSON writer made it


def test_json_lines_on_a_terminal_are_inert_and_the_same_json() -> None:
    out = _Terminal()
    JsonLinesPrinter(out)(TextDelta(HOSTILE))
    assert _inert(out.getvalue())
    assert json.loads(out.getvalue())["text"] == HOSTILE
    assert json.loads(json_escaped(json.dumps(HOSTILE, ensure_ascii=False))) == HOSTILE


async def test_the_workers_progress_lines_are_inert_on_a_terminal() -> None:
    stream = _Terminal()
    hook = ProgressHook(stream)
    await hook.on_event(context(HookPoint.POST_TOOL_USE, tool_name="fetch", tool_result=HOSTILE))
    assert _inert(stream.getvalue()), stream.getvalue()
    assert "\\x1b]52;c;" in stream.getvalue()


class _Plugin:
    def __init__(self, provider: ScriptedProvider) -> None:
        self.provider = provider

    @hookimpl
    def register_providers(self, register: RegisterProvider) -> None:
        register("hostile", self._make)

    @hookimpl
    def register_tools(self, register: RegisterTool) -> None:
        register(hostile_described)

    def _make(self, model: str, **options: Any) -> ScriptedProvider:
        return self.provider


@tool
def hostile_described() -> str:
    """Looks up \x1b]52;c;cm0gLXJmIH4=\x07 things."""
    return "ok"


def test_an_image_url_the_model_gave_is_named_inert_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    painted = ProviderResponse(
        content=[
            TextPart("Here."),
            ImagePart(UrlSource(url="https://x.example/\x1b]0;pwned\x07.png"), "image/png"),
        ],
        stop_reason="end_turn",
        usage=TokenUsage(input_tokens=3, output_tokens=3),
        model="m",
        cost=usd("0"),
    )
    get_plugin_manager().register(_Plugin(ScriptedProvider([painted])), name="hostile-plugin")
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr("sys.stdout", _Terminal())

    assert main(["run", "draw", "--model", "hostile:m", "--save-images", str(tmp_path)]) == 0

    assert "image 1: https://x.example/\\x1b]0;pwned\\x07.png" in err.getvalue()
    assert _inert(err.getvalue())


def test_chat_lists_a_tools_hostile_description_inert_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    get_plugin_manager().register(_Plugin(ScriptedProvider([])), name="hostile-plugin")
    err = _Terminal()
    monkeypatch.setattr("sys.stdin", io.StringIO("/tools\n"))
    monkeypatch.setattr("sys.stderr", err)

    assert main(["chat", "--model", "fixture:echo", "--tool", "hostile_described"]) == 0

    assert "hostile_described: Looks up \\x1b]52;c;" in err.getvalue()
    assert _inert(err.getvalue())


def test_the_new_session_note_names_a_hostile_kept_session_inert_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = "project-alpha\x1b]0;pwned\x07"  # a served agent's client chose it
    env = fixture_env(tmp_path)
    ran = neuron_turn(env, "run", "--model", "fixture:echo", "--session", kept, "hi")
    assert ran.returncode == 0, ran.stderr
    for argv in (  # the chat first: it keeps nothing, the run keeps a session of that name
        ["chat", "--model", "fixture:echo", "--session", "project-alpha"],
        ["run", "hi", "--model", "fixture:echo", "--session", "project-alpha"],
    ):
        err = _Terminal()
        monkeypatch.setattr("sys.stderr", err)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        assert main(argv) == 0
        assert "did you mean --session project-alpha\\x1b]0;pwned\\x07?" in err.getvalue()
        assert _inert(err.getvalue()), argv
