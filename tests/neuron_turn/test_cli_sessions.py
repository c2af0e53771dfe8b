"""`run --session` continues a conversation across invocations; `sessions` and `history`."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from layer0 import Base64Source, SessionScope, UrlSource
from neuron_state_sqlite import SqliteStore
from neuron_turn import (
    DocumentPart,
    ImagePart,
    ProviderMessage,
    TextPart,
    ToolResultPart,
    ToolUsePart,
    messages_from_json,
)
from neuron_turn.cli import main
from neuron_turn.cli._errors import EXIT_AWAITING_APPROVAL, EXIT_NOT_FOUND, EXIT_OK
from neuron_turn.loop._convert import history_to_json
from neuron_turn.plugins import reset_plugin_manager

from .test_cli_state_file import spoil_history

PLUGINS = "fixture-plugin,state-sqlite,orch-local"


@pytest.fixture(autouse=True)
def plugins_and_state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEURON_LOAD_PLUGINS", PLUGINS)
    monkeypatch.setenv("NEURON_STATE_PATH", str(tmp_path / "state.db"))
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def _run(*argv: str) -> None:
    assert main(["run", *argv]) == 0


def test_history_numbers_the_turns_as_fork_counts_them_not_the_tools_results(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run("hello", "--model", "fixture:echo", "--session", "n1")
    _run("add", "--model", "fixture:tool", "--tool", "fixture_add", "--session", "n1")
    capsys.readouterr()

    assert main(["history", "n1"]) == 0

    assert capsys.readouterr().out.splitlines() == [
        "user (turn 1): hello",
        "assistant: echo: hello",
        "user (turn 2): add",
        "assistant: [calls fixture_add({'a': 2, 'b': 3})]",
        "user: [result: 5]",
        "assistant: the sum is 5",
    ]


def test_session_history_persists_across_runs_and_history_prints_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run("first message", "--model", "fixture:echo", "--session", "chat-1")
    _run("second message", "--model", "fixture:echo", "--session", "chat-1")
    capsys.readouterr()

    assert main(["history", "chat-1", "--json"]) == 0
    printed = capsys.readouterr().out
    history = json.loads(printed)
    assert len(messages_from_json(printed)) == 4  # a conversation code can go on from
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "first message"),
        ("assistant", "echo: first message"),
        ("user", "second message"),
        ("assistant", "echo: second message"),
    ]
    assert main(["history", "chat-1"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "user (turn 1): first message",
        "assistant: echo: first message",
        "user (turn 2): second message",
        "assistant: echo: second message",
    ]


def test_sessions_lists_each_conversation_with_its_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run("plan a trip", "--model", "fixture:echo", "--session", "a")
    _run("more", "--model", "fixture:echo", "--session", "a")
    _run("other topic", "--model", "fixture:echo", "--session", "b")
    capsys.readouterr()
    assert main(["sessions", "--json"]) == 0
    entries = {e["session"]: e for e in json.loads(capsys.readouterr().out)}
    assert (entries["a"]["runs"], entries["a"]["title"]) == (2, "plan a trip")
    assert (entries["b"]["runs"], entries["b"]["title"]) == (1, "other topic")
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert "plan a trip" in out and "other topic" in out


def test_a_run_without_session_starts_a_new_one_and_says_how_to_continue(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run("hello", "--model", "fixture:echo")
    hint = capsys.readouterr().err.splitlines()[-1]
    session = hint.split()[1]
    assert main(["history", session, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_history_of_an_unknown_session_is_a_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["history", "nope"]) == EXIT_NOT_FOUND
    assert "no session 'nope'" in capsys.readouterr().err


def test_sessions_continue_across_separate_processes(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "NEURON_LOAD_PLUGINS": PLUGINS,
        "NEURON_STATE_PATH": str(tmp_path / "s.db"),
    }
    base = [sys.executable, "-m", "neuron_turn"]
    for prompt in ("one", "two"):
        done = subprocess.run(
            [*base, "run", prompt, "--model", "fixture:echo", "--session", "p"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [*base, "history", "p"], capture_output=True, text=True, env=env, timeout=60
    )
    assert shown.stdout.count("user (turn ") == 2


def test_sessions_says_which_wait_for_approval_and_lists_past_an_unreadable_history(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    held = ["--model", "fixture:big-sum", "--tool", "fixture_add"]
    assert main(["run", "add", *held, "--session", "w"]) == EXIT_AWAITING_APPROVAL
    _run("hello", "--model", "fixture:echo", "--session", "e")
    _run("hello", "--model", "fixture:echo", "--session", "ok")

    spoil_history(tmp_path / "state.db", "e")
    capsys.readouterr()
    assert main(["sessions", "--json"]) == EXIT_OK
    entries = {e["session"]: e for e in json.loads(capsys.readouterr().out)}
    assert main(["sessions"]) == EXIT_OK
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}

    assert (entries["w"]["waiting"], entries["ok"]["waiting"]) == (["call_1"], [])
    assert "[waiting for approval: call_1]  add" in lines["w"]
    # Listed all the same, saying why its calls cannot be told.
    assert "does not parse" in entries["e"]["error"]
    assert "[unreadable: the stored history of session 'e'" in lines["e"]
    assert "error" not in entries["ok"] and "[" not in lines["ok"]


def test_sessions_shows_the_tools_a_person_decided_for_good(
    capsys: pytest.CaptureFixture[str],
) -> None:
    held = ["--model", "fixture:big-sum", "--tool", "fixture_add"]
    assert main(["run", "add", *held, "--session", "w"]) == EXIT_AWAITING_APPROVAL
    assert main(["resume", "w", "--approve", "call_1", "--always", *held]) == EXIT_OK
    capsys.readouterr()

    assert main(["sessions", "--json"]) == EXIT_OK
    [entry] = json.loads(capsys.readouterr().out)
    assert main(["sessions"]) == EXIT_OK
    line = capsys.readouterr().out

    assert (entry["waiting"], entry["standing"]) == ([], {"fixture_add": "approve"})
    assert "[always run: fixture_add]  add" in line


def test_history_names_files_never_their_data_and_an_image_by_url_by_its_url(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = base64.b64encode(b"%PDF-1.7 the secret plan").decode()
    files = (
        ImagePart(Base64Source(data="iVBORw0KGgo="), "image/png"),
        DocumentPart(Base64Source(data=secret), "application/pdf", "q3.pdf"),
    )
    by_url = ImagePart(UrlSource(url="https://images.example.com/cat.webp"), "image/webp")
    in_data_url = ImagePart(UrlSource(url="data:image/png;base64," + "A" * 5000), "image/png")
    history = history_to_json(
        [
            ProviderMessage("user", [TextPart("Look."), files[0], by_url, in_data_url]),
            ProviderMessage("assistant", [ToolUsePart("t1", "snapshot", {})]),
            ProviderMessage("user", [ToolResultPart("t1", "Took them.", files=files)]),
        ]
    )

    async def store() -> None:
        async with SqliteStore(tmp_path / "state.db") as state:
            await state.write(SessionScope(id="f"), "messages", history)

    asyncio.run(store())
    assert main(["history", "f"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "user (turn 1): Look. [image image/png] [image image/webp] https://images.example.com/cat.webp"
        f" [image image/png] data:image/png;base64,{'A' * 278}… (5022 characters)",
        "assistant: [calls snapshot({})]",
        "user: [result: Took them.] [image image/png] [document q3.pdf]",
    ]
    assert secret not in out and "iVBORw0KGgo" not in out
