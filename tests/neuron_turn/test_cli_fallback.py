"""`neuron-turn run --fallback` and `--retries`, against the fixture plugin's provider."""

from __future__ import annotations

import json

import pytest

from layer0 import LogEffect, TurnOutput
from neuron_turn.cli import main

pytestmark = pytest.mark.usefixtures("fixture_plugins")


def test_a_model_refused_for_its_key_falls_back_to_the_next(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "hi", "--model", "fixture:auth-error", "--fallback", "fixture:echo", "--json"]
    assert main(args) == 0
    output = TurnOutput.model_validate_json(capsys.readouterr().out)
    assert output.message.as_text() == "echo: hi"
    record = output.effects[0]
    assert isinstance(record, LogEffect)
    assert isinstance(record.data, dict)
    attempts = record.data["attempts"]
    assert isinstance(attempts, dict)
    assert attempts["answered_by"] == "fixture:echo"
    assert json.dumps(attempts["failures"]).count("NonRetryableError") == 1


def test_when_every_model_fails_the_last_error_decides_the_exit_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "hi", "--model", "fixture:auth-error", "--fallback", "fixture:bad-request"]
    assert main(args) == 7
    err = capsys.readouterr().err
    assert err.startswith("neuron-turn: error: ") and err.count("\n") == 1
    assert "the provider rejected the request" in err


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--orchestrator", "temporal", "--fallback", "fixture:echo"], "local orchestrator only"),
        (["--orchestrator", "temporal", "--retries", "1"], "local orchestrator only"),
        (["--fallback", "fixture:echo", "--fallback", "fixture:echo"], "already in the chain"),
        (["--fallback", "fixture:auth-error"], "already in the chain"),
    ],
)
def test_fallback_options_that_cannot_work_are_usage_errors(
    capsys: pytest.CaptureFixture[str], extra: list[str], expected: str
) -> None:
    assert main(["run", "hi", "--model", "fixture:auth-error", *extra]) == 2
    assert expected in capsys.readouterr().err


def test_retries_must_be_a_count(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", "hi", "--retries", "-1"])
    assert caught.value.code == 2
    assert "must be 0 or more" in capsys.readouterr().err
