"""A `--session` id the state file does not hold: the run says it starts a new one."""

from __future__ import annotations

import pytest

from neuron_turn.cli import main

ECHO = ["--model", "fixture:echo"]


pytestmark = pytest.mark.usefixtures("fixture_plugins")


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("neuron-turn: note: ")]


def test_a_mistyped_session_says_it_is_new_and_offers_the_nearest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "hi", *ECHO, "--session", "project-alpha"]) == 0
    assert main(["run", "hi", *ECHO, "--session", "groceries"]) == 0
    capsys.readouterr()
    assert main(["run", "more", *ECHO, "--session", "project-alfa"]) == 0
    assert notes(capsys.readouterr().err) == [
        "neuron-turn: note: session project-alfa is new: it starts with no history (did you "
        "mean --session project-alpha? `neuron-turn sessions` lists the kept ones)"
    ]


def test_continuing_a_kept_session_says_nothing_more(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", *ECHO, "--session", "kept"]) == 0
    capsys.readouterr()
    assert main(["run", "again", *ECHO, "--session", "kept"]) == 0
    assert notes(capsys.readouterr().err) == []


def test_a_new_session_with_nothing_near_only_says_it_is_new(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "hi", *ECHO, "--session", "zzzz"]) == 0
    assert notes(capsys.readouterr().err) == [
        "neuron-turn: note: session zzzz is new: it starts with no history "
        "(`neuron-turn sessions` lists the kept ones)"
    ]


def test_without_session_there_is_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hi", *ECHO]) == 0
    assert notes(capsys.readouterr().err) == []
